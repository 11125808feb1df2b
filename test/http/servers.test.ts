import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite<{ h: Harness }>('servers');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const minimal = {
  id_client: 99,
  id_environment: 1,
  name: 'db-paris-01',
  ip: '10.0.0.21',
  login: 'pma',
  passwd: 's3cret',
};

it('defaults: display_name is name, port 3306, flags as PmaControl has them; passwd never returned', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/servers`, { body: minimal });
  assert.is(made.status, 201);
  const item = made.body.item;
  assert.equal(
    [
      item.display_name,
      item.port,
      item.hostname,
      item.database,
      item.is_ssl,
      item.ssh_nat,
      item.ssh_port,
      item.ssh_login,
    ],
    ['db-paris-01', 3306, '', 'mysql', false, '', 22, ''],
  );
  assert.equal(
    [
      item.is_sudo,
      item.is_root,
      item.is_monitored,
      item.is_proxy,
      item.is_vip,
      item.is_acknowledged,
      item.tags,
      item.is_deleted,
    ],
    [false, true, true, false, false, 0, [], false],
  );
  assert.is(item.has_passwd, true);
  assert.not.ok('passwd' in item);
  assert.not.ok(made.text.includes('s3cret'));
});

it('passwd is required on POST; on PUT leaving it out keeps the stored one', async ({ h }) => {
  const { passwd: _drop, ...withoutPassword } = minimal;
  const refused = await h.request('POST', `${BASE}/servers`, { body: withoutPassword });
  assert.is(refused.body.errors[0].field, 'passwd');
  const made = await h.request('POST', `${BASE}/servers`, { body: minimal });
  const put = await h.request('PUT', `${BASE}/servers/${made.body.id}`, {
    body: { ...withoutPassword, display_name: 'Paris 1' },
  });
  assert.is(put.status, 200);
  assert.is(put.body.item.has_passwd, true);
  assert.is(put.body.item.version, 2);
  const samePassword = await h.request('PATCH', `${BASE}/servers/${made.body.id}`, { body: { passwd: 's3cret' } });
  assert.is(samePassword.body.changed, false);
  const newPassword = await h.request('PATCH', `${BASE}/servers/${made.body.id}`, { body: { passwd: 'other' } });
  assert.is(newPassword.body.item.version, 3);
});

it('PUT without display_name puts it back to name', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, display_name: 'Pretty' } });
  assert.is(made.body.item.display_name, 'Pretty');
  const put = await h.request('PUT', `${BASE}/servers/${made.body.id}`, { body: minimal });
  assert.is(put.body.item.display_name, 'db-paris-01');
});

it('name is unique among all servers, soft-deleted ones included; so is (ip, port)', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/servers`, { body: minimal });
  await h.request('DELETE', `${BASE}/servers/${made.body.id}`);
  const sameName = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, ip: '10.0.0.22' } });
  assert.equal([sameName.status, sameName.body.code], [409, 'conflict']);
  const holder = { resource: 'servers', id: made.body.id };
  assert.equal(sameName.body.conflict, { ...holder, fields: ['name'] }, 'the body names the holder');
  const sameAddress = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'other' } });
  assert.equal([sameAddress.status, sameAddress.body.code], [409, 'conflict']);
  assert.equal(sameAddress.body.conflict, { ...holder, fields: ['ip', 'port'] });
  const otherPort = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'other', port: 3307 } });
  assert.is(otherPort.status, 201);
  const clash = await h.request('PATCH', `${BASE}/servers/${otherPort.body.id}`, { body: { port: 3306 } });
  assert.is(clash.status, 409);
});

it('references: client, environment and tags must exist', async ({ h }) => {
  for (const [field, value] of [
    ['id_client', 5],
    ['id_environment', 77],
    ['tags', [1234]],
  ] as const) {
    const reply = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, [field]: value } });
    assert.is(reply.status, 422, field);
    assert.is(reply.body.errors[0].field, field);
  }
});

it('tags are stored without duplicates, in id order', async ({ h }) => {
  const ids = [];
  for (const name of ['a', 'b'])
    ids.push(
      (await h.request('POST', `${BASE}/tags`, { body: { name, color: '#000000', background: '#FFFFFF' } })).body.id,
    );
  const made = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, tags: [ids[1], ids[0], ids[1]] } });
  assert.equal(made.body.item.tags, [ids[0], ids[1]]);
});

it('input aliases: ssl → is_ssl; is_password_crypted 0 means a plain password; alias and field together is a 422', async ({
  h,
}) => {
  const made = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, ssl: 1, is_password_crypted: 0 } });
  assert.is(made.status, 201);
  assert.is(made.body.item.is_ssl, true);
  assert.not.ok('ssl' in made.body.item);
  assert.not.ok('is_password_crypted' in made.body.item);
  const both = await h.request('POST', `${BASE}/servers`, {
    body: { ...minimal, name: 'x', ip: '10.9.9.9', ssl: 1, is_ssl: false },
  });
  assert.is(both.body.errors[0].code, 'duplicate_field');
});

it('list filters narrow the list: id_client, id_environment, is_deleted, tag, limit, offset', async ({ h }) => {
  const tag = (
    await h.request('POST', `${BASE}/tags`, { body: { name: 't', color: '#000000', background: '#FFFFFF' } })
  ).body.id;
  const a = (
    await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'a', ip: '10.0.0.1', tags: [tag] } })
  ).body.id;
  const b = (
    await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'b', ip: '10.0.0.2', id_environment: 2 } })
  ).body.id;
  const c = (await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'c', ip: '10.0.0.3' } })).body.id;
  await h.request('DELETE', `${BASE}/servers/${c}`);
  const ids = async (query: string) =>
    (await h.request('GET', `${BASE}/servers?${query}`)).body.items.map((s: { id: number }) => s.id);
  assert.equal(await ids(''), [a, b, c]);
  assert.equal(await ids('id_environment=2'), [b]);
  assert.equal(await ids('is_deleted=true'), [c]);
  assert.equal(await ids('is_deleted=0'), [a, b]);
  assert.equal(await ids(`tag=${tag}`), [a]);
  assert.equal(await ids('id_client=99&limit=1&offset=1'), [b]);
  const page = await h.request('GET', `${BASE}/servers?limit=2`);
  assert.is(page.body.total, 3);
});

it('OR by repetition, q, sort and total: the list parameters of section 1', async ({ h }) => {
  const client = (await h.request('POST', `${BASE}/clients`, { body: { libelle: 'ACME' } })).body.id;
  const post = (name: string, ip: string, more: object = {}) =>
    h.request('POST', `${BASE}/servers`, { body: { ...minimal, name, ip, ...more } }).then((r) => r.body.id);
  const a = await post('paris-db', '10.0.0.1', { hostname: 'alpha.example.net' });
  const b = await post('lyon-db', '10.0.0.2', { id_client: client, id_environment: 2 });
  const c = await post('Paris-replica', '10.0.0.3', { id_environment: 3 });
  const names = async (query: string) => {
    const body = (await h.request('GET', `${BASE}/servers?${query}`)).body;
    return [body.items.map((s: { id: number }) => s.id), body.total];
  };
  assert.equal(await names('id_environment=2&id_environment=3'), [[b, c], 2], 'a repeated filter is an OR');
  assert.equal(await names(`id_client=99&id_client=${client}&id_environment=1`), [[a], 1], 'filters AND together');
  assert.equal(await names('q=PARIS'), [[a, c], 2], 'q: case-insensitive, in names');
  assert.equal(await names('q=alpha.example'), [[a], 1], 'q: in host names too');
  assert.equal(await names('sort=-name'), [[c, a, b], 3]);
  assert.equal(await names('sort=id_environment,-id'), [[a, b, c], 3]);
  assert.equal(await names('q=db&sort=name&limit=1'), [[b], 2], 'total counts the matches before limit');
  const bad = await h.request('GET', `${BASE}/servers?sort=nope`);
  assert.equal([bad.status, bad.body.code], [400, 'invalid_query']);
});

it('names are unique case-insensitively; 999.1.1.1 is no address; an unquoted If-Match says how to quote', async ({
  h,
}) => {
  const made = await h.request('POST', `${BASE}/servers`, { body: minimal });
  const twin = await h.request('POST', `${BASE}/servers`, {
    body: { ...minimal, name: 'DB-PARIS-01', ip: '10.9.9.9' },
  });
  assert.equal([twin.status, twin.body.code], [409, 'conflict']);
  const badIp = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'x', ip: '999.1.1.1' } });
  assert.equal([badIp.status, badIp.body.errors[0].field, badIp.body.errors[0].code], [422, 'ip', 'invalid_format']);
  const host = await h.request('POST', `${BASE}/servers`, { body: { ...minimal, name: 'y', ip: 'db.example.net' } });
  assert.is(host.status, 201, 'a host name is an address');
  const unquoted = await h.request('PATCH', `${BASE}/servers/${made.body.id}`, {
    body: { port: 3307 },
    headers: { 'If-Match': '1' },
  });
  assert.is(unquoted.status, 412);
  assert.match(unquoted.body.detail, 'If-Match: "1"');
  assert.is((await h.request('GET', `${BASE}/servers/${made.body.id}`)).body.item.port, 3306);
});

it('a server read with GET can be PUT back: is_deleted, has_passwd and the rest are ignored', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/servers`, { body: minimal });
  await h.request('DELETE', `${BASE}/servers/${made.body.id}`);
  const read = await h.request('GET', `${BASE}/servers/${made.body.id}`);
  const put = await h.request('PUT', `${BASE}/servers/${made.body.id}`, {
    body: { ...read.body.item, is_deleted: false },
  });
  assert.equal([put.status, put.body.changed, put.body.item.is_deleted, put.body.item.version], [200, false, true, 2]);
});

it.run();
