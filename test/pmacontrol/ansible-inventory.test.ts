import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { tempDir } from '../support/process.js';
import { toolAvailable } from '../support/tools.js';

const INVENTORY = '/fr/api/inventory/ansible';

const ansibleAvailable = () =>
  toolAvailable(
    'ansible-inventory',
    ['--version'],
    'ANSIBLE_REQUIRED',
    'the inventory read by ansible-inventory --list',
  );

/** Two clients, tags whose names need mending (two of them the same once mended), servers, one soft-deleted. */
async function fleet(h: Harness) {
  const post = async (resource: string, body: Record<string, unknown>) => {
    const reply = await h.request('POST', `${BASE}/${resource}`, { body });
    assert.is(reply.status, 201, reply.text);
    return reply.body.id as number;
  };
  const acme = await post('clients', { libelle: 'ACME Corp.' });
  const galera = await post('tags', { name: 'galera', color: '#FFFFFF', background: '#000000' });
  const dash = await post('tags', { name: 'dc-1', color: '#FFFFFF', background: '#000000' });
  const dot = await post('tags', { name: 'dc.1', color: '#FFFFFF', background: '#000000' });
  const server = (name: string, more: Record<string, unknown>) =>
    post('servers', {
      name,
      login: 'monitor',
      passwd: 'Inventory-Secret-1',
      id_client: acme,
      id_environment: 1,
      ...more,
    });
  const one = await server('db-one', {
    ip: '10.0.0.1',
    tags: [galera, dash],
    ssh_login: 'admin',
    ssh_port: 2222,
    is_vip: true,
  });
  const two = await server('db-two', { ip: '10.0.0.2', id_client: 99, id_environment: 6, tags: [dot], port: 3307 });
  const gone = await server('db-gone', { ip: '10.0.0.3', tags: [galera] });
  return { one, two, gone, galera, dash, dot };
}

const it = suite('GET /fr/api/inventory/ansible: the live servers as an Ansible script inventory');

it('groups per client, environment and tag, valid names, hostvars, no secret, no soft-deleted server', async () => {
  const h = await startHarness();
  try {
    const ids = await fleet(h);
    assert.is((await h.request('DELETE', `${BASE}/servers/${ids.gone}`)).status, 200);
    const reply = await h.request('GET', INVENTORY);
    assert.is(reply.status, 200, reply.text);
    const inventory = reply.body;
    assert.equal(Object.keys(inventory._meta.hostvars), ['db-one', 'db-two']);
    assert.equal(inventory._meta.hostvars['db-one'], {
      ansible_host: '10.0.0.1',
      ansible_port: 2222,
      ansible_user: 'admin',
      mysql_port: 3306,
      mysql_user: 'monitor',
      pmacontrol_id: ids.one,
      pmacontrol_id_client: 100,
      pmacontrol_id_environment: 1,
      pmacontrol_tags: ['galera', 'dc-1'],
      is_proxy: false,
      is_vip: true,
    });
    assert.not.ok('ansible_user' in inventory._meta.hostvars['db-two'], 'no SSH user: none given');
    const groups = Object.keys(inventory).filter((name) => name !== '_meta');
    assert.equal(groups, [
      'client_ACME_Corp_',
      'client_Unassigned',
      'env_prod',
      'env_test',
      `tag_dc_1_${ids.dash}`,
      `tag_dc_1_${ids.dot}`,
      'tag_galera',
    ]);
    for (const name of groups) assert.match(name, /^[A-Za-z_][A-Za-z0-9_]*$/);
    assert.equal(inventory.tag_galera.hosts, ['db-one'], 'the soft-deleted server is in no group');
    assert.equal(inventory.client_ACME_Corp_.hosts, ['db-one']);
    assert.not.ok(reply.text.includes('Inventory-Secret'), 'no secret');
  } finally {
    await h.close();
  }
});

it('?at= a moment: the inventory as it was; a bad moment or an unknown parameter is a 400', async () => {
  const h = await startHarness();
  try {
    const ids = await fleet(h);
    const before = h.service.revision;
    assert.is((await h.request('DELETE', `${BASE}/servers/${ids.gone}`)).status, 200);
    const past = await h.request('GET', `${INVENTORY}?at=${before + 1}`);
    assert.equal(Object.keys(past.body._meta.hostvars), ['db-one', 'db-two', 'db-gone'], 'before the delete');
    const now = await h.request('GET', INVENTORY);
    assert.equal(Object.keys(now.body._meta.hostvars), ['db-one', 'db-two']);
    const bad = await h.request('GET', `${INVENTORY}?at=yesterday`);
    assert.equal([bad.status, bad.body.code], [400, 'invalid_query']);
    assert.is((await h.request('GET', `${INVENTORY}?limit=3`)).status, 400);
  } finally {
    await h.close();
  }
});

const ansible = ansibleAvailable();
(ansible ? it : it.skip)('ansible-inventory --list reads it as Ansible sees it', async () => {
  const h = await startHarness();
  try {
    await fleet(h);
    const dir = tempDir();
    const saved = join(dir, 'inventory.json');
    writeFileSync(saved, (await h.request('GET', INVENTORY)).text);
    const script = join(dir, 'pmacontrol.sh');
    writeFileSync(script, `#!/bin/sh\nif [ "$1" = "--list" ]; then cat '${saved}'; else echo '{}'; fi\n`);
    chmodSync(script, 0o755);
    const run = spawnSync('ansible-inventory', ['-i', script, '--list'], {
      env: { ...process.env, ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true', ANSIBLE_LOCAL_TEMP: dir, HOME: dir },
    });
    assert.is(run.status, 0, run.stderr.toString());
    assert.not.match(run.stderr.toString(), /WARNING.*(Invalid characters|Skipping)/);
    const seen = JSON.parse(run.stdout.toString());
    assert.equal([...seen.tag_galera.hosts].sort(), ['db-gone', 'db-one']);
    assert.equal(seen._meta.hostvars['db-one'].ansible_port, 2222);
    assert.equal(seen.env_test.hosts, ['db-two']);
    assert.ok(seen.all.children.includes('client_ACME_Corp_'));
  } finally {
    await h.close();
  }
});

it.run();
