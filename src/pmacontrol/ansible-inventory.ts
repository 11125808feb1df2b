import type { EntryRecord } from '../engine/table.js';

/**
 * The configuration as Ansible's script inventory (what `ansible-inventory --list` reads): a group
 * per client, environment and tag holding the live servers, and each server's variables under
 * `_meta.hostvars`. No secret is in it.
 */

export interface InventoryLists {
  servers: readonly EntryRecord[];
  clients: readonly EntryRecord[];
  environments: readonly EntryRecord[];
  tags: readonly EntryRecord[];
}

export interface AnsibleGroup {
  hosts: string[];
}

export type AnsibleInventory = { _meta: { hostvars: Record<string, Record<string, unknown>> } } & Record<
  string,
  AnsibleGroup | { hostvars: Record<string, Record<string, unknown>> }
>;

/** An Ansible group name: letters, digits and underscores, not starting with a digit. */
const groupName = (prefix: string, name: string) => `${prefix}_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;

/**
 * The group names of one kind of entry (`client_ACME`): a name that two entries would share once
 * made valid (`a-b`, `a.b`) is given each one's id (`tag_a_b_3`, `tag_a_b_4`).
 */
function groupNames(prefix: string, entries: readonly EntryRecord[], label: string): Map<number, string> {
  const byName = new Map<string, number[]>();
  for (const entry of entries) {
    const name = groupName(prefix, String(entry[label])).toLowerCase();
    byName.set(name, [...(byName.get(name) ?? []), entry.id]);
  }
  const names = new Map<number, string>();
  for (const entry of entries) {
    const name = groupName(prefix, String(entry[label]));
    const shared = (byName.get(name.toLowerCase()) ?? []).length > 1;
    names.set(entry.id, shared ? `${name}_${entry.id}` : name);
  }
  return names;
}

/** The inventory of the live servers (soft-deleted ones are left out), in id order. */
export function ansibleInventory(lists: InventoryLists): AnsibleInventory {
  const clients = groupNames('client', lists.clients, 'libelle');
  const environments = groupNames('env', lists.environments, 'key');
  const tagGroups = groupNames('tag', lists.tags, 'name');
  const tagNames = new Map(lists.tags.map((tag) => [tag.id, String(tag.name)]));
  const groups = new Map<string, string[]>();
  const join = (group: string | undefined, host: string) => {
    if (group !== undefined) groups.set(group, [...(groups.get(group) ?? []), host]);
  };
  const hostvars: Record<string, Record<string, unknown>> = {};
  for (const server of lists.servers) {
    if (server.is_deleted === true) continue;
    const host = String(server.name);
    const tags = (server.tags as number[]) ?? [];
    hostvars[host] = {
      ansible_host: server.ip,
      ansible_port: server.ssh_port,
      ...(server.ssh_login ? { ansible_user: server.ssh_login } : {}),
      mysql_port: server.port,
      mysql_user: server.login,
      pmacontrol_id: server.id,
      pmacontrol_id_client: server.id_client,
      pmacontrol_id_environment: server.id_environment,
      pmacontrol_tags: tags.map((id) => tagNames.get(id)).filter((name) => name !== undefined),
      is_proxy: server.is_proxy === true,
      is_vip: server.is_vip === true,
    };
    join(clients.get(server.id_client as number), host);
    join(environments.get(server.id_environment as number), host);
    for (const id of tags) join(tagGroups.get(id), host);
  }
  const inventory: AnsibleInventory = { _meta: { hostvars } } as AnsibleInventory;
  for (const [name, hosts] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) inventory[name] = { hosts };
  return inventory;
}
