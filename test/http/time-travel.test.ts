import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite<{ h: Harness }>('time travel (?at=), differences, revert');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const tag = (name: string, color = '#000000') => ({ name, color, background: '#FFFFFF' });
const server = { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd: 'first' };

/** The position of the last event so far, from the change log. */
const head = async (h: Harness) =>
  (await h.request('GET', '/fr/api/changes?order=desc&limit=1')).body.items[0].position as number;

it('an entry at a position or a time: its values, as_of and the ETag of the version then', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('a') });
  const id = made.body.id;
  const p1 = await head(h);
  const created = (await h.request('GET', `${BASE}/tags/${id}`)).body.item.created_at as string;
  await h.request('PATCH', `${BASE}/tags/${id}`, { body: { name: 'b' } });
  await h.request('PATCH', `${BASE}/tags/${id}`, { body: { name: 'c' } });
  const then = await h.request('GET', `${BASE}/tags/${id}?at=${p1}`);
  assert.equal([then.body.item.name, then.body.item.version, then.headers.get('etag')], ['a', 1, '"1"']);
  assert.equal(then.body.as_of, { position: p1, at: created });
  const byTime = await h.request('GET', `${BASE}/tags/${id}?at=${encodeURIComponent(created)}`);
  assert.equal([byTime.body.item.name, byTime.body.as_of.position], ['a', p1]);
  const middle = await h.request('GET', `${BASE}/tags/${id}?at=${p1 + 1}`);
  assert.equal([middle.body.item.name, middle.body.item.version, middle.body.item.created_at], ['b', 2, created]);
  const later = await h.request('GET', `${BASE}/tags/${id}?at=2999-01-01T00:00:00Z`);
  assert.equal([later.body.item.name, later.body.as_of.position], ['c', p1 + 2]);
  const before = await h.request('GET', `${BASE}/tags/${id}?at=${p1 - 1}`);
  assert.equal([before.status, before.body.code], [404, 'not_found']);
  await h.request('DELETE', `${BASE}/tags/${id}`);
  const gone = await h.request('GET', `${BASE}/tags/${id}?at=${p1 + 3}`);
  assert.equal([gone.status, gone.body.code], [404, 'deleted']);
  assert.is((await h.request('GET', `${BASE}/tags/${id}?at=${p1 + 2}`)).body.item.name, 'c');
});

it('a list at a moment, filters and paging combined with it; soft-deleted servers included', async ({ h }) => {
  for (const name of ['a', 'b', 'c']) await h.request('POST', `${BASE}/tags`, { body: tag(name) });
  const s = (await h.request('POST', `${BASE}/servers`, { body: server })).body.id;
  const p = await head(h);
  await h.request('POST', `${BASE}/tags`, { body: tag('d') });
  await h.request('PATCH', `${BASE}/tags/1`, { body: { color: '#111111' } });
  await h.request('DELETE', `${BASE}/tags/2`);
  await h.request('DELETE', `${BASE}/servers/${s}`);
  const then = await h.request('GET', `${BASE}/tags?at=${p}`);
  assert.equal(
    then.body.items.map((t: { name: string }) => t.name),
    ['a', 'b', 'c'],
  );
  assert.equal([then.body.total, then.body.as_of.position], [3, p]);
  assert.is(then.body.items[0].color, '#000000');
  const filtered = await h.request('GET', `${BASE}/tags?at=${p}&q=B&sort=-name&limit=1`);
  assert.equal([filtered.body.items.map((t: { name: string }) => t.name), filtered.body.total], [['b'], 1]);
  const now = await h.request('GET', `${BASE}/tags`);
  assert.equal(
    now.body.items.map((t: { name: string }) => t.name),
    ['a', 'c', 'd'],
  );
  assert.not.ok('as_of' in now.body);
  const servers = await h.request('GET', `${BASE}/servers?at=${p}&is_deleted=false`);
  assert.equal(
    servers.body.items.map((x: { id: number }) => x.id),
    [s],
  );
  const deleted = await h.request('GET', `${BASE}/servers?is_deleted=true&at=999999`);
  assert.equal(
    deleted.body.items.map((x: { id: number; has_passwd: boolean }) => [x.id, x.has_passwd]),
    [[s, true]],
  );
  assert.is((await h.request('GET', `${BASE}/tags?at=0`)).body.total, 0);
  assert.is((await h.request('GET', `${BASE}/tags?at=tomorrow`)).status, 400);
});

it('a list at a moment far back, across many versions, matches the entries read one by one', async ({ h }) => {
  const ids: number[] = [];
  for (let i = 0; i < 30; i++) ids.push((await h.request('POST', `${BASE}/tags`, { body: tag(`t${i}`) })).body.id);
  const marks: number[] = [];
  for (let round = 0; round < 40; round++) {
    const id = ids[(round * 7) % ids.length];
    await h.request('PATCH', `${BASE}/tags/${id}`, { body: { color: `#0000${String(round).padStart(2, '0')}` } });
    if (round % 9 === 0) marks.push(await head(h));
  }
  for (const mark of marks) {
    const list = (await h.request('GET', `${BASE}/tags?at=${mark}`)).body.items;
    const one = await Promise.all(
      ids.map(async (id) => (await h.request('GET', `${BASE}/tags/${id}?at=${mark}`)).body.item),
    );
    assert.equal(list, one);
  }
});

it('diff: the net change per resource; an entry changed and changed back is not listed', async ({ h }) => {
  const a = (await h.request('POST', `${BASE}/tags`, { body: tag('a') })).body.id;
  const b = (await h.request('POST', `${BASE}/tags`, { body: tag('b') })).body.id;
  const from = await head(h);
  const c = (await h.request('POST', `${BASE}/tags`, { body: tag('c') })).body.id;
  await h.request('PATCH', `${BASE}/tags/${a}`, { body: { color: '#123456' } });
  await h.request('PATCH', `${BASE}/tags/${b}`, { body: { color: '#999999' } });
  await h.request('PATCH', `${BASE}/tags/${b}`, { body: { color: '#000000' } });
  await h.request('DELETE', `${BASE}/tags/${a}`);
  const d = (await h.request('POST', `${BASE}/tags`, { body: tag('d') })).body.id;
  await h.request('PATCH', `${BASE}/tags/${d}`, { body: { color: '#ABCDEF' } });
  const reply = await h.request('GET', `/fr/api/diff?from=${from}`);
  assert.is(reply.status, 200);
  const tags = reply.body.resources.tags;
  assert.equal(
    tags.created.map((t: { id: number; color: string }) => [t.id, t.color]),
    [
      [c, '#000000'],
      [d, '#ABCDEF'],
    ],
  );
  assert.equal([tags.updated, tags.deleted], [[], [a]]);
  assert.equal(reply.body.resources.servers, { created: [], updated: [], deleted: [] });
  assert.is(reply.body.from.position, from);
  const middle = await h.request('GET', `/fr/api/diff?from=${from}&to=${from + 2}`);
  assert.equal(middle.body.resources.tags.updated, [
    { id: a, diff: [{ field: 'color', before: '#000000', after: '#123456' }] },
  ]);
  assert.is((await h.request('GET', '/fr/api/diff')).status, 400);
});

it('diff between two past moments over more than 200 entries equals the two lists compared', async ({ h }) => {
  const ids: number[] = [];
  for (let i = 0; i < 210; i++) ids.push((await h.request('POST', `${BASE}/tags`, { body: tag(`t${i}`) })).body.id);
  await h.request('PATCH', `${BASE}/tags/${ids[0]}`, { body: { color: '#010101' } });
  const from = await head(h);
  for (const id of ids.slice(0, 205)) await h.request('PATCH', `${BASE}/tags/${id}`, { body: { color: '#222222' } });
  await h.request('PATCH', `${BASE}/tags/${ids[1]}`, { body: { color: '#000000' } });
  await h.request('DELETE', `${BASE}/tags/${ids[2]}`);
  const made = (await h.request('POST', `${BASE}/tags`, { body: tag('new', '#333333') })).body.id;
  const to = await head(h);
  await h.request('PATCH', `${BASE}/tags/${ids[3]}`, { body: { color: '#444444' } });
  type Tag = { id: number; color: string };
  const list = async (at: number) =>
    new Map(((await h.request('GET', `${BASE}/tags?at=${at}&limit=1000`)).body.items as Tag[]).map((t) => [t.id, t]));
  const [was, is] = [await list(from), await list(to)];
  const reply = await h.request('GET', `/fr/api/diff?from=${from}&to=${to}`);
  assert.is(reply.status, 200);
  const tags = reply.body.resources.tags;
  const updated = [...is.values()]
    .filter((t) => was.has(t.id) && was.get(t.id)!.color !== t.color)
    .map((t) => ({ id: t.id, diff: [{ field: 'color', before: was.get(t.id)!.color, after: t.color }] }));
  assert.is(updated.length, 203);
  assert.equal(tags.updated, updated);
  assert.equal(tags.deleted, [ids[2]]);
  assert.equal(tags.created, [is.get(made)]);
});

it('revert: one event, the values of that version (secrets included), every rule of a PUT', async ({ h }) => {
  const s = (await h.request('POST', `${BASE}/servers`, { body: server })).body.id;
  await h.request('PATCH', `${BASE}/servers/${s}`, { body: { port: 3307, passwd: 'second' } });
  const reverted = await h.request('POST', `${BASE}/servers/${s}/revert`, { body: { version: 1 } });
  assert.equal(
    [reverted.status, reverted.body.reverted_to, reverted.body.item.port, reverted.body.item.version],
    [200, 1, 3306, 3],
  );
  assert.is(reverted.headers.get('etag'), '"3"');
  const history = (await h.request('GET', `${BASE}/servers/${s}/history`)).body.items;
  assert.equal(
    [history.at(-1).type, history.at(-1).data.to_version, history.at(-1).data.values.passwd],
    ['ServerReverted', 1, '[redacted]'],
  );
  const samePassword = await h.request('PATCH', `${BASE}/servers/${s}`, { body: { passwd: 'first' } });
  assert.is(samePassword.body.changed, false, 'the password of version 1 is back');
  assert.equal(
    [(await h.request('POST', `${BASE}/servers/${s}/revert`, { body: { version: 9 } })).body.errors[0].field],
    ['version'],
  );
  const stale = await h.request('POST', `${BASE}/servers/${s}/revert`, {
    body: { version: 2 },
    headers: { 'If-Match': '"1"' },
  });
  assert.is(stale.status, 412);
  await h.request('POST', `${BASE}/servers`, { body: { ...server, name: 'db2', port: 3307 } });
  const clash = await h.request('POST', `${BASE}/servers/${s}/revert`, { body: { version: 2 } });
  assert.equal([clash.status, clash.body.code], [409, 'conflict'], '10.0.0.1:3307, which version 2 had, is taken now');
  assert.is((await h.request('POST', `${BASE}/servers/${s}/revert`, { body: { version: 1, more: 1 } })).status, 422);
});

it('revert brings back a hard-deleted tag with its id, and a soft-deleted server live, with the restore checks', async ({
  h,
}) => {
  const t = (await h.request('POST', `${BASE}/tags`, { body: tag('gone') })).body.id;
  await h.request('DELETE', `${BASE}/tags/${t}`);
  const back = await h.request('POST', `${BASE}/tags/${t}/revert`, { body: { version: 1 } });
  assert.equal([back.status, back.body.id, back.body.item.name, back.body.item.version], [200, t, 'gone', 3]);
  assert.is((await h.request('GET', `${BASE}/tags/${t}`)).status, 200);
  const env = (
    await h.request('POST', `${BASE}/environments`, {
      body: { libelle: 'Lab', key: 'lab', class: 'info', letter: 'L' },
    })
  ).body.id;
  const s = (await h.request('POST', `${BASE}/servers`, { body: { ...server, id_environment: env } })).body.id;
  await h.request('DELETE', `${BASE}/servers/${s}`);
  const live = await h.request('POST', `${BASE}/servers/${s}/revert`, { body: { version: 1 } });
  assert.equal([live.status, live.body.item.is_deleted, live.body.item.version], [200, false, 3]);
  await h.request('DELETE', `${BASE}/servers/${s}`);
  await h.request('DELETE', `${BASE}/environments/${env}`);
  const blocked = await h.request('POST', `${BASE}/servers/${s}/revert`, { body: { version: 1 } });
  assert.equal([blocked.status, blocked.body.errors[0].field], [422, 'is_deleted']);
});

it('revert of a deleted tag brings it back alone and lists the servers its delete took it from', async ({ h }) => {
  const t = (await h.request('POST', `${BASE}/tags`, { body: tag('carried') })).body.id;
  const other = (await h.request('POST', `${BASE}/tags`, { body: tag('other') })).body.id;
  const post = (name: string, ip: string, tags: number[]) =>
    h.request('POST', `${BASE}/servers`, { body: { ...server, name, ip, tags } });
  const a = (await post('carrier-a', '10.3.0.1', [t, other])).body.id;
  const b = (await post('carrier-b', '10.3.0.2', [t])).body.id;
  await h.request('DELETE', `${BASE}/tags/${t}`);
  const back = await h.request('POST', `${BASE}/tags/${t}/revert`, { body: { version: 1 } });
  assert.is(back.status, 200);
  assert.equal(back.body.references_not_restored, [
    { resource: 'servers', id: a, field: 'tags' },
    { resource: 'servers', id: b, field: 'tags' },
  ]);
  assert.equal(
    (await h.request('GET', `${BASE}/servers/${a}`)).body.item.tags,
    [other],
    'the servers stay as they are',
  );
  const plain = await h.request('POST', `${BASE}/tags/${other}/revert`, { body: { version: 1 } });
  assert.is(plain.body.references_not_restored, undefined, 'only when a hard-deleted entry comes back');
});

it.run();
