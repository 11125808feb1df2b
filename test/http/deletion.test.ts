import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { makeKey } from '../support/keys.js';

const it = suite<{ h: Harness }>('deletion rules and references (API.md §3)');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

let counter = 0;
async function server(h: Harness, fields: Record<string, unknown> = {}) {
  counter += 1;
  const reply = await h.request('POST', `${BASE}/servers`, {
    body: {
      id_client: 99,
      id_environment: 1,
      name: `db-${counter}`,
      ip: `10.0.0.${counter % 250}`,
      port: 3306 + counter,
      login: 'pma',
      passwd: 'pw',
      ...fields,
    },
  });
  assert.is(reply.status, 201, reply.text);
  return reply.body.id as number;
}

it('an empty store starts with environments 1–6 and client 99, recorded as events by system', async ({ h }) => {
  const envs = await h.request('GET', `${BASE}/environments`);
  assert.equal(
    envs.body.items.map((e: Record<string, unknown>) => [e.id, e.libelle, e.key, e.class, e.letter]),
    [
      [1, 'Production', 'prod', 'danger', 'P'],
      [2, 'Preprod', 'preprod', 'warning', 'U'],
      [3, 'Recipe', 'recette', 'default', 'R'],
      [4, 'Integration', 'integration', 'info', 'I'],
      [5, 'Developpement', 'dev', 'success', 'D'],
      [6, 'Test', 'test', 'primary', 'T'],
    ],
  );
  const clients = await h.request('GET', `${BASE}/clients`);
  assert.equal(
    clients.body.items.map((c: { id: number }) => c.id),
    [99],
  );
  const history = await h.request('GET', `${BASE}/clients/99/history`);
  assert.is(history.body.items[0].actor, 'system');
  assert.is(history.body.items[0].type, 'ClientCreated');
});

it('tags: hard delete removes the tag from every server, soft-deleted ones included', async ({ h }) => {
  const tagA = (
    await h.request('POST', `${BASE}/tags`, { body: { name: 'a', color: '#000000', background: '#111111' } })
  ).body.id;
  const tagB = (
    await h.request('POST', `${BASE}/tags`, { body: { name: 'b', color: '#000000', background: '#111111' } })
  ).body.id;
  const live = await server(h, { tags: [tagA, tagB] });
  const dead = await server(h, { tags: [tagA] });
  await h.request('DELETE', `${BASE}/servers/${dead}`);
  const reply = await h.request('DELETE', `${BASE}/tags/${tagA}`);
  assert.is(reply.body.mode, 'hard');
  assert.equal((await h.request('GET', `${BASE}/servers/${live}`)).body.item.tags, [tagB]);
  assert.equal((await h.request('GET', `${BASE}/servers/${dead}`)).body.item.tags, []);
  // The servers' histories show the change, with its cause: the tag's one event.
  const history = await h.request('GET', `${BASE}/servers/${live}/history`);
  const last = history.body.items.at(-1);
  assert.equal([last.type, last.data, last.revision], ['TagDeleted', { id: tagA }, 1]);
  assert.equal(last.diff, [{ field: 'tags', before: [tagA, tagB], after: [tagB] }]);
  assert.is((await h.request('GET', `${BASE}/servers/${live}`)).body.item.version, 2);
  assert.is(
    (await h.store.readAll()).filter((e) => e.type === 'ServerUpdated').length,
    0,
    'one event, no cascade of events',
  );
});

it('clients: 99 is guarded; in use by a live server is 409 with dependents; else soft-deleted servers move to 99', async ({
  h,
}) => {
  assert.is((await h.request('DELETE', `${BASE}/clients/99`)).body.code, 'delete_guarded');
  const client = (await h.request('POST', `${BASE}/clients`, { body: { libelle: 'ACME' } })).body.id;
  const live = await server(h, { id_client: client });
  const dead = await server(h, { id_client: client });
  await h.request('DELETE', `${BASE}/servers/${dead}`);
  const refused = await h.request('DELETE', `${BASE}/clients/${client}`);
  assert.is(refused.status, 409);
  assert.is(refused.body.code, 'in_use');
  assert.equal(refused.body.dependents, [{ resource: 'servers', id: live }]);
  await h.request('DELETE', `${BASE}/servers/${live}`);
  const deleted = await h.request('DELETE', `${BASE}/clients/${client}`);
  assert.equal(deleted.body, { id: client, resource: 'clients', deleted: true, mode: 'hard' });
  for (const id of [live, dead]) assert.is((await h.request('GET', `${BASE}/servers/${id}`)).body.item.id_client, 99);
  assert.is((await h.request('GET', `${BASE}/clients/${client}`)).body.code, 'deleted');
});

it('environments: 1–6 guarded, in use by a live server is 409 in_use, else hard', async ({ h }) => {
  for (const id of [1, 6])
    assert.is((await h.request('DELETE', `${BASE}/environments/${id}`)).body.code, 'delete_guarded');
  const env = (
    await h.request('POST', `${BASE}/environments`, {
      body: { libelle: 'Lab', key: 'lab', class: 'info', letter: 'L' },
    })
  ).body.id;
  assert.is(env, 7);
  const srv = await server(h, { id_environment: env });
  const refused = await h.request('DELETE', `${BASE}/environments/${env}`);
  assert.equal(
    [refused.status, refused.body.code, refused.body.dependents],
    [409, 'in_use', [{ resource: 'servers', id: srv }]],
  );
  await h.request('DELETE', `${BASE}/servers/${srv}`);
  assert.is((await h.request('DELETE', `${BASE}/environments/${env}`)).body.mode, 'hard');
});

it('servers: soft delete keeps the entry listed; a second DELETE changes nothing; PATCH is_deleted false restores', async ({
  h,
}) => {
  const id = await server(h);
  const first = await h.request('DELETE', `${BASE}/servers/${id}`);
  assert.equal(first.body, { id, resource: 'servers', deleted: true, mode: 'soft' });
  const read = await h.request('GET', `${BASE}/servers/${id}`);
  assert.is(read.body.item.is_deleted, true);
  assert.is(read.body.item.version, 2);
  assert.ok((await h.request('GET', `${BASE}/servers`)).body.items.some((s: { id: number }) => s.id === id));
  const second = await h.request('DELETE', `${BASE}/servers/${id}`);
  assert.is(second.status, 200);
  assert.is((await h.request('GET', `${BASE}/servers/${id}`)).body.item.version, 2);
  assert.is((await h.request('PATCH', `${BASE}/servers/${id}`, { body: { is_deleted: true } })).status, 422);
  const restored = await h.request('PATCH', `${BASE}/servers/${id}`, { body: { is_deleted: false } });
  assert.is(restored.body.item.is_deleted, false);
  assert.is(restored.body.item.version, 3);
  const types = (await h.request('GET', `${BASE}/servers/${id}/history`)).body.items.map(
    (e: { type: string }) => e.type,
  );
  assert.equal(types, ['ServerCreated', 'ServerDeleted', 'ServerRestored']);
});

it('servers: restoring is a 422 when the client or environment no longer exists', async ({ h }) => {
  const env = (
    await h.request('POST', `${BASE}/environments`, {
      body: { libelle: 'Tmp', key: 'tmp', class: 'info', letter: 'X' },
    })
  ).body.id;
  const id = await server(h, { id_environment: env });
  await h.request('DELETE', `${BASE}/servers/${id}`);
  await h.request('DELETE', `${BASE}/environments/${env}`);
  const refused = await h.request('PATCH', `${BASE}/servers/${id}`, { body: { is_deleted: false } });
  assert.is(refused.status, 422);
  assert.is(refused.body.errors[0].field, 'is_deleted');
  assert.is((await h.request('GET', `${BASE}/servers/${id}`)).body.item.is_deleted, true);
});

it('aliases need a server that is not soft-deleted; (dns, port) is unique, dns case-insensitive', async ({ h }) => {
  const id = await server(h);
  const made = await h.request('POST', `${BASE}/aliases`, {
    body: { id_mysql_server: id, dns: 'DB.example.net', port: 3306 },
  });
  assert.is(made.status, 201);
  const dup = await h.request('POST', `${BASE}/aliases`, {
    body: { id_mysql_server: id, dns: 'db.EXAMPLE.net', port: 3306 },
  });
  assert.equal([dup.status, dup.body.code], [409, 'conflict']);
  assert.is(
    (await h.request('POST', `${BASE}/aliases`, { body: { id_mysql_server: id, dns: 'db.example.net', port: 3307 } }))
      .status,
    201,
  );
  await h.request('DELETE', `${BASE}/servers/${id}`);
  const onDeleted = await h.request('POST', `${BASE}/aliases`, {
    body: { id_mysql_server: id, dns: 'other.example.net', port: 3306 },
  });
  assert.equal([onDeleted.status, onDeleted.body.errors[0].field], [422, 'id_mysql_server']);
  const missing = await h.request('POST', `${BASE}/aliases`, {
    body: { id_mysql_server: 4242, dns: 'x.example.net', port: 1 },
  });
  assert.is(missing.body.errors[0].code, 'unknown_reference');
  assert.is((await h.request('DELETE', `${BASE}/aliases/${made.body.id}`)).body.mode, 'hard');
});

it('ssh-keys: in use by a storage area is 409 with dependents; storage-areas delete hard', async ({ h }) => {
  const key = makeKey('ed25519');
  const keyId = (
    await h.request('POST', `${BASE}/ssh-keys`, {
      body: { name: 'backup', user: 'root', public_key: key.publicKey, private_key: key.privateKey },
    })
  ).body.id;
  const area = await h.request('POST', `${BASE}/storage-areas`, {
    body: { id_ssh_key: keyId, ip: 'nas.example.net', path: '/srv/backup', libelle: 'NAS' },
  });
  assert.is(area.status, 201);
  assert.is(area.body.item.port, 22);
  assert.is(area.body.item.id_geolocalisation_city, null);
  const refused = await h.request('DELETE', `${BASE}/ssh-keys/${keyId}`);
  assert.equal(
    [refused.status, refused.body.code, refused.body.dependents],
    [409, 'in_use', [{ resource: 'storage-areas', id: area.body.id }]],
  );
  assert.is((await h.request('DELETE', `${BASE}/storage-areas/${area.body.id}`)).body.mode, 'hard');
  assert.is((await h.request('DELETE', `${BASE}/ssh-keys/${keyId}`)).body.mode, 'hard');
  const dangling = await h.request('POST', `${BASE}/storage-areas`, {
    body: { id_ssh_key: keyId, ip: '10.1.1.1', path: '/x', libelle: 'L' },
  });
  assert.is(dangling.body.errors[0].field, 'id_ssh_key');
});

it('a refused request leaves no event', async ({ h }) => {
  const before = h.service.revision;
  await h.request('DELETE', `${BASE}/clients/99`);
  await h.request('DELETE', `${BASE}/environments/2`);
  await h.request('POST', `${BASE}/servers`, {
    body: { id_client: 1234, id_environment: 1, name: 'n', ip: '1.1.1.1', login: 'l', passwd: 'p' },
  });
  await h.request('POST', `${BASE}/tags`, { body: { name: 'x' } });
  assert.is(h.service.revision, before);
  assert.is((await h.store.readAll()).length, before + 1);
});

it.run();
