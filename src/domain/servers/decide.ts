import { decideChange, decideCreate, type EntryRules } from '../shared/entry-decider.js';
import { type FieldError, ValidationFailed } from '../shared/errors.js';
import { assertReference, assertUnique, loadForWrite, sameText } from '../shared/guards.js';
import type { Command, Entry, EntryCommand } from '../shared/types.js';
import type { ConfigState } from '../state.js';
import type { ServerEvent, ServerFields } from './events.js';

/** PATCH `{"is_deleted": false}` restores a soft-deleted server: `restore` carries it. */
export type ServerCommand =
  | Exclude<EntryCommand<ServerFields>, { type: 'patch' }>
  | (Command<ServerFields>['patch'] & { restore?: boolean });

export const SERVER_FIELDS = [
  'id_client',
  'id_environment',
  'name',
  'display_name',
  'ip',
  'port',
  'hostname',
  'login',
  'passwd',
  'database',
  'is_ssl',
  'ssh_nat',
  'ssh_port',
  'ssh_login',
  'is_sudo',
  'is_root',
  'is_monitored',
  'is_proxy',
  'is_vip',
  'is_acknowledged',
  'tags',
] as const satisfies readonly (keyof ServerFields)[];

export const serverRules: EntryRules<'Server', ServerFields> = {
  resource: 'servers',
  prefix: 'Server',
  fields: SERVER_FIELDS,
  collection: (state) => state.servers,
  check(state, next, before, id) {
    if (next.id_client !== before?.id_client) assertReference('id_client', state.clients, next.id_client, 'client');
    if (next.id_environment !== before?.id_environment) {
      assertReference('id_environment', state.environments, next.id_environment, 'environment');
    }
    const added = next.tags.filter((tag) => !before?.tags.includes(tag));
    for (const tag of added) assertReference('tags', state.tags, tag, 'tag');
    // Soft-deleted servers keep their name and address: a restore must never collide.
    assertUnique(state.servers, id, (other) => other.name === next.name, `server name "${next.name}"`);
    assertUnique(
      state.servers,
      id,
      (other) => other.port === next.port && sameText(other.ip, next.ip),
      `server address ${next.ip}:${next.port}`,
    );
  },
};

function restoreBlockers(state: ConfigState, server: Entry<ServerFields>): FieldError[] {
  const errors: FieldError[] = [];
  if (!state.clients.entries.has(server.id_client)) {
    errors.push({
      field: 'is_deleted',
      code: 'unknown_reference',
      message: `client ${server.id_client} no longer exists`,
    });
  }
  if (!state.environments.entries.has(server.id_environment)) {
    errors.push({
      field: 'is_deleted',
      code: 'unknown_reference',
      message: `environment ${server.id_environment} no longer exists`,
    });
  }
  return errors;
}

export function decide(command: ServerCommand, state: ConfigState): ServerEvent[] {
  switch (command.type) {
    case 'create':
      return decideCreate(serverRules, command, state);
    case 'replace':
      return decideChange<'Server', ServerFields>(serverRules, command, state);
    case 'patch': {
      const server = loadForWrite('servers', state.servers, command.id, command.ifMatch);
      if (!command.restore || !server.is_deleted)
        return decideChange<'Server', ServerFields>(serverRules, command, state);
      const blockers = restoreBlockers(state, { ...server, ...command.fields });
      if (blockers.length > 0) throw new ValidationFailed(blockers);
      return [
        { type: 'ServerRestored', data: { id: server.id } },
        ...decideChange<'Server', ServerFields>(serverRules, command, state),
      ];
    }
    case 'delete': {
      const server = loadForWrite('servers', state.servers, command.id, command.ifMatch);
      return server.is_deleted ? [] : [{ type: 'ServerDeleted', data: { id: server.id } }];
    }
  }
}
