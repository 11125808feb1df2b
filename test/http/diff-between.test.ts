import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { random } from '../support/random.js';

// The differences between two past moments, made from the version rows between them, checked
// against each entry read at both moments (`?at=`) over a random history: changes of several fields,
// changes made and undone, soft deletes and restores, hard deletes, entries made and deleted in
// between, and entries deleted then brought back by a revert.
const it = suite<{ h: Harness }>('diff between two past moments, against each entry read at both');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const COLORS = ['#000000', '#111111', '#222222'];
type Item = Record<string, unknown>;
type Member = { field: string; before: unknown; after: unknown };
/** Fields a diff leaves out: the version's own bookkeeping. */
const BOOKKEEPING = new Set(['id', 'version', 'created_at', 'updated_at', 'has_passwd']);

/** Every entry of `resource` made so far as it was at `position`, by id (absent or hard-deleted: none). */
async function at(h: Harness, resource: string, ids: number[], position: number): Promise<Map<number, Item>> {
  const found = new Map<number, Item>();
  for (const id of ids) {
    const reply = await h.request('GET', `${BASE}/${resource}/${id}?at=${position}`);
    if (reply.status === 200) found.set(id, reply.body.item);
    else assert.ok([404, 410].includes(reply.status), `${resource}/${id}?at=${position}: ${reply.text}`);
  }
  return found;
}

/** What the diff must say, from the entries read at both moments; passwords are compared apart. */
function expected(was: Map<number, Item>, is: Map<number, Item>) {
  const created = [...is.keys()].filter((id) => !was.has(id)).sort((a, b) => a - b);
  const deleted = [...was.keys()].filter((id) => !is.has(id)).sort((a, b) => a - b);
  const updated: { id: number; diff: Member[] }[] = [];
  for (const [id, before] of [...was].sort(([a], [b]) => a - b)) {
    const after = is.get(id);
    if (!after) continue;
    const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((f) => !BOOKKEEPING.has(f));
    const diff = fields
      .filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]))
      .map((field) => ({ field, before: before[field], after: after[field] }));
    if (diff.length > 0) updated.push({ id, diff: sorted(diff) });
  }
  return { created, deleted, updated };
}

const sorted = (members: Member[]) => [...members].sort((a, b) => a.field.localeCompare(b.field));

interface History {
  tags: number[];
  servers: number[];
  /** The position after each step. */
  positions: number[];
}

/** 24 tags and 16 servers, then 260 random steps, each a write (refused ones included). */
async function randomHistory(h: Harness): Promise<History> {
  const pick = random(7);
  const history: History = { tags: [], servers: [], positions: [] };
  const { tags, servers } = history;
  const newTag = async (i: number) => {
    const body = { name: `t${i}`, color: COLORS[pick(3)], background: '#FFFFFF' };
    tags.push((await h.request('POST', `${BASE}/tags`, { body })).body.id);
    return { status: 201, text: '' };
  };
  for (let i = 0; i < 24; i++) await newTag(i);
  for (let i = 0; i < 16; i++) {
    const body = { id_client: 99, id_environment: 1, name: `db${i}`, ip: `10.0.0.${i}`, login: 'pma', passwd: 'p0' };
    servers.push((await h.request('POST', `${BASE}/servers`, { body })).body.id);
  }
  const serverPatches = () => [
    { port: 3306 + pick(2) },
    { login: `l${pick(2)}`, display_name: `d${pick(3)}` },
    { passwd: `p${pick(2)}` },
  ];
  for (let step = 0; step < 260; step++) {
    const [kind, tag, server] = [pick(10), tags[pick(tags.length)], servers[pick(servers.length)]];
    const tagPatch = pick(2) ? { color: COLORS[pick(3)] } : { color: COLORS[pick(3)], background: COLORS[pick(3)] };
    const steps = [
      () => h.request('PATCH', `${BASE}/tags/${tag}`, { body: tagPatch }),
      () => h.request('DELETE', `${BASE}/tags/${tag}`),
      () => h.request('POST', `${BASE}/tags/${tag}/revert`, { body: { version: 1 } }),
      () => newTag(100 + step),
      () => h.request('PATCH', `${BASE}/servers/${server}`, { body: serverPatches()[pick(3)] }),
      () => h.request('DELETE', `${BASE}/servers/${server}`),
      () => h.request('PATCH', `${BASE}/servers/${server}`, { body: { is_deleted: false } }),
    ];
    const reply = await steps[[0, 0, 0, 1, 2, 3, 4, 4, 5, 6][kind]]();
    assert.ok(reply.status < 500, reply.text);
    history.positions.push((await h.request('GET', '/fr/api/changes?order=desc&limit=1')).body.items[0].position);
  }
  return history;
}

/** The diff from `from` to `to` of one resource, against its entries read at both moments. */
async function check(h: Harness, body: any, resource: 'tags' | 'servers', ids: number[], [from, to]: number[]) {
  const got = body.resources[resource];
  const is = await at(h, resource, ids, to);
  const want = expected(await at(h, resource, ids, from), is);
  assert.equal(
    got.created,
    want.created.map((id) => is.get(id)),
    `${resource} created, ${from} → ${to}`,
  );
  assert.equal(got.deleted, want.deleted, `${resource} deleted, ${from} → ${to}`);
  const changed = (got.updated as { id: number; diff: Member[] }[])
    .map(({ id, diff }) => ({ id, diff: sorted(diff.filter((m) => m.field !== 'passwd')) }))
    .filter(({ diff }) => diff.length > 0);
  assert.equal(changed, want.updated, `${resource} updated, ${from} → ${to}`);
  for (const { diff } of got.updated as { diff: Member[] }[])
    for (const member of diff.filter((m) => m.field === 'passwd'))
      assert.equal([member.before, member.after], ['[redacted]', '[redacted]']);
}

it('every change between two moments, whatever the history in between', async ({ h }) => {
  const { tags, servers, positions } = await randomHistory(h);
  // Past moments only (the last write is the head, answered from memory).
  for (const [a, b] of [
    [0, 258],
    [10, 40],
    [60, 200],
    [100, 101],
    [150, 257],
  ]) {
    const moments = [positions[a], positions[b]];
    const reply = await h.request('GET', `/fr/api/diff?from=${moments[0]}&to=${moments[1]}`);
    assert.is(reply.status, 200, reply.text);
    await check(h, reply.body, 'tags', tags, moments);
    await check(h, reply.body, 'servers', servers, moments);
  }
});

it.run();
