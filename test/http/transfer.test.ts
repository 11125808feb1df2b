import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { makeKey } from '../support/keys.js';

const it = suite('export and import: the whole configuration as one document, all or nothing');
const SETUP = { actor: 'setup', requestId: 'setup' };
const RESOURCES = ['tags', 'clients', 'environments', 'aliases', 'storage-areas', 'servers', 'ssh-keys'];
/** What the target store's own history sets: the import is a new event there. */
const OWN_HISTORY = ['version', 'created_at', 'updated_at', 'date', 'added_on'];

let issued = 0;
async function tokenFor(h: Harness, role: 'admin' | 'reader', secrets = false) {
  const { token } = await h.service.write.issueToken(
    { name: `${role}-${++issued}`, role, secrets, expiresAt: null },
    SETUP,
  );
  return { Authorization: `Bearer ${token}` };
}

/** An inventory with every resource, references between them, secrets and a soft-deleted server. */
async function fill(h: Harness) {
  const post = async (resource: string, body: object) => {
    const reply = await h.request('POST', `${BASE}/${resource}`, { body });
    assert.is(reply.status, 201, JSON.stringify(reply.body));
    return reply.body.id as number;
  };
  const red = await post('tags', { name: 'red', color: '#FF0000', background: '#000000' });
  const blue = await post('tags', { name: 'blue', color: '#0000FF', background: '#FFFFFF' });
  const client = await post('clients', { libelle: 'ACME', logo: 'acme.png', is_monitored: false });
  const env = await post('environments', { libelle: 'Staging', key: 'stg', class: 'info', letter: 'S' });
  const key = makeKey('ed25519');
  const sshKey = await post('ssh-keys', {
    name: 'backup',
    user: 'root',
    public_key: key.publicKey,
    private_key: key.privateKey,
  });
  const server = { id_client: client, id_environment: env, login: 'pma', passwd: 'pw-1', tags: [red, blue] };
  const db1 = await post('servers', { ...server, name: 'db1', ip: '10.0.0.1', ssh_nat: 'bastion:2222', is_vip: true });
  const db2 = await post('servers', { ...server, name: 'db2', ip: '10.0.0.2', passwd: 'pw-2', tags: [blue] });
  await post('storage-areas', { id_ssh_key: sshKey, ip: 'backup.example.net', path: '/srv/backups', libelle: 'main' });
  await post('aliases', { id_mysql_server: db1, dns: 'primary.db.example.net', port: 3306 });
  assert.is((await h.request('PATCH', `${BASE}/tags/${red}`, { body: { name: 'crimson' } })).status, 200);
  assert.is((await h.request('DELETE', `${BASE}/servers/${db2}`)).status, 200);
  return { red, db1, db2, sshKey, key };
}

const withoutOwnHistory = (items: Record<string, unknown>[]) =>
  items.map((item) => Object.fromEntries(Object.entries(item).filter(([k]) => !OWN_HISTORY.includes(k))));

it('round trip: export with sealed secrets, import into an empty store with the same key, every GET the same', async () => {
  const secretKey = randomBytes(32);
  const source = await startHarness({ secretKey });
  const target = await startHarness({ secretKey });
  try {
    const { db1, db2, sshKey, key } = await fill(source);
    const exported = await source.request('GET', '/fr/api/export?secrets=sealed', {
      headers: await tokenFor(source, 'admin'),
    });
    assert.is(exported.status, 200);
    assert.is(exported.body.format, 'pmacontrol-config/1');
    assert.ok(exported.body.resources.servers[0].passwd_sealed.startsWith('v1:'));
    assert.not.ok(exported.text.includes('pw-1'), 'a plain secret is in the export');

    const imported = await target.request('POST', '/fr/api/import', {
      body: exported.body,
      headers: await tokenFor(target, 'admin'),
    });
    assert.equal(
      imported.body,
      { created: 9, updated: 0, unchanged: 7, dry_run: false },
      JSON.stringify(imported.body),
    );
    for (const resource of RESOURCES) {
      const [before, after] = await Promise.all(
        [source, target].map((h) => h.request('GET', `${BASE}/${resource}`).then((r) => r.body)),
      );
      assert.equal(withoutOwnHistory(after.items), withoutOwnHistory(before.items), resource);
    }
    const deleted = await target.request('GET', `${BASE}/servers/${db2}`);
    assert.is(deleted.body.item.is_deleted, true);
    const secrets = await tokenFor(target, 'reader', true);
    const read = (path: string) => target.request('GET', `${BASE}/${path}/secret`, { headers: secrets });
    assert.equal((await read(`servers/${db1}`)).body, { passwd: 'pw-1' });
    assert.equal((await read(`servers/${db2}`)).body, { passwd: 'pw-2' });
    assert.is((await read(`ssh-keys/${sshKey}`)).body.private_key.trim(), key.privateKey.trim());

    const events = (await target.store.readAll()).length;
    const again = await target.request('POST', '/fr/api/import', {
      body: exported.body,
      headers: await tokenFor(target, 'admin'),
    });
    assert.equal(again.body, { created: 0, updated: 0, unchanged: 16, dry_run: false });
    assert.is((await target.store.readAll()).length, events + 1, 'only the token issued for the call was recorded');
  } finally {
    await source.close();
    await target.close();
  }
});

it('a sealed secret from a service with another key is a problem, not a wrong password', async () => {
  const source = await startHarness();
  const target = await startHarness();
  try {
    await fill(source);
    const exported = await source.request('GET', '/fr/api/export?secrets=sealed', {
      headers: await tokenFor(source, 'admin'),
    });
    const refused = await target.request('POST', '/fr/api/import', {
      body: exported.body,
      headers: await tokenFor(target, 'admin'),
    });
    assert.is(refused.status, 422);
    const fields = refused.body.errors.map((e: { field: string; code: string }) => `${e.field} ${e.code}`);
    assert.ok(fields.includes('resources.servers[0].passwd_sealed sealed_elsewhere'), fields.join('\n'));
    assert.ok(fields.includes('resources.ssh-keys[0].private_key_sealed sealed_elsewhere'), fields.join('\n'));
  } finally {
    await source.close();
    await target.close();
  }
});

it('any problem is a 422 listing every problem with its path, and nothing is written; dry_run checks only', async () => {
  const h = await startHarness();
  try {
    const admin = await tokenFor(h, 'admin');
    const server = { id_client: 99, id_environment: 1, login: 'pma', passwd: 'pw', port: 3306 };
    const document = {
      format: 'pmacontrol-config/1',
      resources: {
        tags: [
          { id: 1, name: 'same', color: '#000000', background: '#FFFFFF' },
          { id: 2, name: 'SAME', color: '#000000', background: '#FFFFFF' },
        ],
        servers: [
          { ...server, id: 10, name: 'a', ip: '10.0.0.1' },
          { ...server, id: 11, name: 'b', ip: '999.1.1.1' },
          { ...server, id: 12, name: 'c', ip: '10.0.0.3', id_client: 404 },
          { ...server, id: 10, name: 'd', ip: '10.0.0.4' },
        ],
        widgets: [],
      },
    };
    const before = (await h.store.readAll()).length;
    const refused = await h.request('POST', '/fr/api/import', { body: document, headers: admin });
    assert.is(refused.status, 422);
    const fields = refused.body.errors.map((e: { field: string; code: string }) => `${e.field} ${e.code}`).sort();
    assert.equal(fields, [
      'resources.servers[1].ip invalid_format',
      'resources.servers[2].id_client unknown_reference',
      'resources.servers[3].id duplicate_id',
      'resources.tags[1] conflict',
      'resources.widgets unknown_resource',
    ]);
    assert.is((await h.store.readAll()).length, before, 'a refused import records nothing');

    const good = {
      format: 'pmacontrol-config/1',
      resources: { tags: [document.resources.tags[0]], servers: [document.resources.servers[0]] },
    };
    const dry = await h.request('POST', '/fr/api/import?dry_run=true', { body: good, headers: admin });
    assert.equal(dry.body, { created: 2, updated: 0, unchanged: 0, dry_run: true });
    assert.is((await h.store.readAll()).length, before, 'a dry run records nothing');
    const done = await h.request('POST', '/fr/api/import', { body: good, headers: admin });
    assert.equal(done.body, { created: 2, updated: 0, unchanged: 0, dry_run: false });
    assert.equal((await h.request('GET', `${BASE}/servers/10`)).body.item.tags, []);
  } finally {
    await h.close();
  }
});

it('is_deleted in a document: left out, a deleted server stays deleted (PUT rules); false restores it; true deletes', async () => {
  const h = await startHarness();
  try {
    const admin = await tokenFor(h, 'admin');
    const body = { id_client: 99, id_environment: 1, login: 'pma', passwd: 'pw' };
    const post = (name: string, ip: string) =>
      h.request('POST', `${BASE}/servers`, { body: { ...body, name, ip } }).then((r) => r.body.id as number);
    const [a, b, c] = [await post('a', '10.0.0.1'), await post('b', '10.0.0.2'), await post('c', '10.0.0.3')];
    for (const id of [a, b]) await h.request('DELETE', `${BASE}/servers/${id}`);
    const entry = (id: number, name: string, ip: string, more: object = {}) => ({ ...body, id, name, ip, ...more });
    const servers = [
      entry(a, 'a', '10.0.0.1'),
      entry(b, 'b', '10.0.0.2', { is_deleted: false }),
      entry(c, 'c', '10.0.0.3', { is_deleted: true }),
    ];
    const done = await h.request('POST', '/fr/api/import', {
      body: { format: 'pmacontrol-config/1', resources: { servers } },
      headers: admin,
    });
    assert.equal(done.body, { created: 0, updated: 2, unchanged: 1, dry_run: false });
    const state = async (id: number) => (await h.request('GET', `${BASE}/servers/${id}`)).body.item.is_deleted;
    assert.equal([await state(a), await state(b), await state(c)], [true, false, true]);
  } finally {
    await h.close();
  }
});

it('who may: export for readers, sealed secrets and import for admins; ?at= exports the past', async () => {
  const h = await startHarness({ access: { anonymousRole: 'reader', corsOrigins: [] } });
  try {
    const admin = await tokenFor(h, 'admin');
    const made = await h.request('POST', `${BASE}/tags`, {
      body: { name: 'old', color: '#000000', background: '#FFFFFF' },
      headers: admin,
    });
    const position = (await h.request('GET', '/fr/api/export')).body.position;
    await h.request('PATCH', `${BASE}/tags/${made.body.id}`, { body: { name: 'new' }, headers: admin });
    const now = await h.request('GET', '/fr/api/export');
    assert.equal([now.status, now.body.resources.tags[0].name, now.body.position], [200, 'new', position + 1]);
    assert.not.ok('passwd_sealed' in JSON.parse(now.text).resources, 'no secret without secrets=sealed');
    const then = await h.request('GET', `/fr/api/export?at=${position}`);
    assert.equal([then.body.resources.tags[0].name, then.body.position], ['old', position]);
    assert.is((await h.request('GET', '/fr/api/export?secrets=sealed')).status, 403);
    assert.is((await h.request('GET', '/fr/api/export?secrets=plain', { headers: admin })).status, 400);
    assert.is((await h.request('GET', '/fr/api/export?unknown=1')).status, 400);
    assert.is((await h.request('POST', '/fr/api/import', { body: now.body })).status, 403);
    const notJson = await h.request('POST', '/fr/api/import', {
      raw: '{',
      headers: { ...admin, 'Content-Type': 'application/json' },
    });
    assert.is(notJson.status, 400);
    const wrongFormat = await h.request('POST', '/fr/api/import', {
      body: { format: 'x', resources: [] },
      headers: admin,
    });
    assert.equal(
      wrongFormat.body.errors.map((e: { field: string }) => e.field),
      ['format', 'resources'],
    );
  } finally {
    await h.close();
  }
});

it.run();

const secretsDryRun = suite('a dry run never tells whether a secret matches, unless the caller may read secrets');

secretsDryRun(
  'without the right: a sent password counts as updated, match or not; with it: compared, and recorded',
  async () => {
    const h = await startHarness({ access: { anonymousRole: 'reader', corsOrigins: [] } });
    try {
      const [admin, holder] = [await tokenFor(h, 'admin'), await tokenFor(h, 'admin', true)];
      const server = { id_client: 99, id_environment: 1, name: 'db', ip: '10.0.0.1', login: 'l', passwd: 'right' };
      const made = await h.request('POST', `${BASE}/servers`, { body: server, headers: admin });
      const document = (passwd: string) => ({
        format: 'pmacontrol-config/1',
        resources: { servers: [{ ...server, id: made.body.id, passwd }] },
      });
      const dryRun = (passwd: string, headers: Record<string, string>) =>
        h.request('POST', '/fr/api/import?dry_run=true', { body: document(passwd), headers });
      const before = h.service.revision;
      const [guessRight, guessWrong] = [await dryRun('right', admin), await dryRun('wrong', admin)];
      assert.equal(guessRight.body, guessWrong.body, 'the same answer, match or not');
      assert.is(guessRight.body.updated, 1);
      assert.is(h.service.revision, before, 'nothing recorded: nothing was compared');
      assert.equal(
        [(await dryRun('right', holder)).body.unchanged, (await dryRun('wrong', holder)).body.updated],
        [1, 1],
      );
      const compared = await h.request('GET', '/fr/api/changes?type=SecretsCompared', { headers: admin });
      const who = (await h.request('GET', '/fr/api/whoami', { headers: holder })).body.actor;
      assert.equal(
        compared.body.items.map((c: { actor: string; data: unknown }) => [c.actor, c.data]),
        Array(2).fill([who, { entries: [{ resource: 'servers', id: made.body.id }] }]),
      );
    } finally {
      await h.close();
    }
  },
);

secretsDryRun.run();
