import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite<{ h: Harness }>('the change log: GET /fr/api/changes');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const CHANGES = '/fr/api/changes';
const tag = (name: string) => ({ name, color: '#000000', background: '#FFFFFF' });
const server = (name: string, fields: Record<string, unknown> = {}) => ({
  id_client: 99,
  id_environment: 1,
  name,
  ip: `${name}.example.net`,
  login: 'pma',
  passwd: `pw-of-${name}`,
  ...fields,
});

/** A small history: two tags, a server carrying both, a port change, a password change, a tag deleted. */
async function story(h: Harness) {
  const a = (await h.request('POST', `${BASE}/tags`, { body: tag('a'), headers: { 'X-Request-ID': 'make-a' } })).body
    .id;
  const b = (await h.request('POST', `${BASE}/tags`, { body: tag('b') })).body.id;
  const s = (await h.request('POST', `${BASE}/servers`, { body: server('db1', { tags: [a, b] }) })).body.id;
  await h.request('PATCH', `${BASE}/servers/${s}`, { body: { port: 3307 }, headers: { 'X-Request-ID': 'move-port' } });
  await h.request('PATCH', `${BASE}/servers/${s}`, { body: { passwd: 'second-password' } });
  await h.request('DELETE', `${BASE}/tags/${a}`);
  return { a, b, s };
}

it('every event, oldest first, as a history item plus resource, id, diff and effects', async ({ h }) => {
  const { a, b, s } = await story(h);
  const all = (await h.request('GET', `${CHANGES}?limit=1000`)).body;
  assert.is(all.next, null);
  assert.equal(
    all.items.map((c: { position: number }) => c.position),
    all.items.map((_: unknown, i: number) => i + 1),
  );
  const [genesis] = all.items;
  assert.equal(
    [genesis.type, genesis.actor, genesis.resource, genesis.id, genesis.revision],
    ['EnvironmentCreated', 'system', 'environments', 1, 0],
  );
  const key = all.items.find((c: { type: string }) => c.type === 'SecretKeyRecorded');
  assert.equal([key.resource, key.id, key.diff], [null, null, []]);
  const port = all.items.find((c: { request_id: string }) => c.request_id === 'move-port');
  assert.equal(
    [port.resource, port.id, port.revision, port.diff],
    ['servers', s, 1, [{ field: 'port', before: 3306, after: 3307 }]],
  );
  const deletion = all.items.at(-1);
  assert.equal([deletion.type, deletion.resource, deletion.id], ['TagDeleted', 'tags', a]);
  assert.equal(
    deletion.diff.find((m: { field: string }) => m.field === 'name'),
    { field: 'name', before: 'a', after: null },
  );
  assert.equal(deletion.effects, [
    { resource: 'servers', id: s, revision: 3, diff: [{ field: 'tags', before: [a, b], after: [b] }] },
  ]);
});

it('secrets are "[redacted]" on whichever side holds a value, never the value nor the sealed value', async ({ h }) => {
  const { s } = await story(h);
  const reply = await h.request('GET', `${CHANGES}?resource=servers&id=${s}`);
  const created = reply.body.items[0];
  assert.equal(
    created.diff.find((m: { field: string }) => m.field === 'passwd'),
    { field: 'passwd', before: null, after: '[redacted]' },
  );
  assert.is(created.data.passwd, '[redacted]');
  const changed = reply.body.items.find(
    (c: { data: { changes?: object } }) => c.data.changes && 'passwd' in c.data.changes,
  );
  assert.equal(changed.diff, [{ field: 'passwd', before: '[redacted]', after: '[redacted]' }]);
  assert.not.ok(
    reply.text.includes('pw-of-db1') || reply.text.includes('second-password') || reply.text.includes('v1:'),
  );
});

it('filters combine with AND: resource (with the entries changed in passing), id, actor, request_id, type', async ({
  h,
}) => {
  const { a, s } = await story(h);
  const positions = async (query: string) =>
    (await h.request('GET', `${CHANGES}?${query}`)).body.items.map(
      (c: { type: string; id: number }) => `${c.type}/${c.id}`,
    );
  assert.equal(await positions(`resource=servers&id=${s}`), [
    `ServerCreated/${s}`,
    `ServerUpdated/${s}`,
    `ServerUpdated/${s}`,
    `TagDeleted/${a}`,
  ]);
  assert.equal(await positions('resource=tags'), [`TagCreated/${a}`, `TagCreated/${a + 1}`, `TagDeleted/${a}`]);
  assert.equal(await positions('request_id=make-a'), [`TagCreated/${a}`]);
  assert.equal(await positions('type=ServerUpdated&resource=servers'), [`ServerUpdated/${s}`, `ServerUpdated/${s}`]);
  assert.equal(await positions('actor=system&type=ClientCreated'), ['ClientCreated/99']);
  assert.equal(await positions('actor=nobody'), []);
});

it('pages: limit, next, after; order=desc with before; since inclusive, until exclusive', async ({ h }) => {
  await story(h);
  const first = (await h.request('GET', `${CHANGES}?limit=5`)).body;
  assert.equal(
    first.items.map((c: { position: number }) => c.position),
    [1, 2, 3, 4, 5],
  );
  assert.is(first.next, '/fr/api/changes?limit=5&after=5');
  const second = (await h.request('GET', first.next)).body;
  assert.equal(
    second.items.map((c: { position: number }) => c.position),
    [6, 7, 8, 9, 10],
  );
  const last = (await h.request('GET', `${CHANGES}?order=desc&limit=2`)).body;
  assert.equal(
    last.items.map((c: { position: number }) => c.position),
    [14, 13],
  );
  assert.is(last.next, '/fr/api/changes?order=desc&limit=2&before=13');
  assert.equal(
    (await h.request('GET', last.next)).body.items.map((c: { position: number }) => c.position),
    [12, 11],
  );
  const times = first.items.map((c: { at: string }) => c.at);
  const window = (await h.request('GET', `${CHANGES}?since=${times[1]}&until=${encodeURIComponent(times[3])}`)).body;
  assert.equal(
    window.items.map((c: { position: number }) => c.position),
    [2, 3],
  );
  const offset = times[1].replace('Z', '+00:00').replace('T00:', 'T00:');
  const same = (await h.request('GET', `${CHANGES}?since=${encodeURIComponent(offset)}&limit=1`)).body;
  assert.is(same.items[0].position, 2, 'an offset is read as such');
});

it('malformed or unknown parameters are a 400 invalid_query', async ({ h }) => {
  for (const query of [
    'resource=widgets',
    'id=3',
    'since=yesterday',
    'since=2026-01-01T00:00:00',
    'limit=0',
    'limit=1001',
    'order=up',
    'order=desc&after=3',
    'before=3',
    'color=red',
    'after=-1',
    'type=a&type=b',
  ]) {
    const reply = await h.request('GET', `${CHANGES}?${query}`);
    assert.equal([reply.status, reply.body.code], [400, 'invalid_query'], query);
  }
});

it('NDJSON streams every matching change, one per line; limit applies only when given', async ({ h }) => {
  await story(h);
  const reply = await h.request('GET', `${CHANGES}?resource=tags`, { headers: { Accept: 'application/x-ndjson' } });
  assert.match(reply.headers.get('content-type') ?? '', /^application\/x-ndjson/);
  const lines = reply.text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(
    lines.map((c: { type: string }) => c.type),
    ['TagCreated', 'TagCreated', 'TagDeleted'],
  );
  const limited = await h.request('GET', `${CHANGES}?limit=2`, { headers: { Accept: 'application/x-ndjson' } });
  assert.is(limited.text.trimEnd().split('\n').length, 2);
});

it('CSV: a header row and one row per diff member, RFC 4180 quoting', async ({ h }) => {
  const { a, b, s } = await story(h);
  const reply = await h.request('GET', `${CHANGES}?resource=servers&id=${s}`, { headers: { Accept: 'text/csv' } });
  assert.match(reply.headers.get('content-type') ?? '', /^text\/csv/);
  const rows = reply.text.split('\r\n').filter(Boolean);
  assert.is(rows[0], 'position,at,actor,request_id,type,resource,id,field,before,after');
  const port = rows.find((row) => row.includes(',move-port,'))!;
  assert.match(port, new RegExp(`,ServerUpdated,servers,${s},port,3306,3307$`));
  const untag = rows.find((row) => row.includes(',TagDeleted,servers,'))!;
  assert.match(untag, new RegExp(`,tags,"\\[${a},${b}\\]",\\[${b}\\]$`), 'quoted only when it holds a comma');
  assert.ok(rows.some((row) => row.endsWith(',passwd,,[redacted]')));
});

it('CSV an auditor can open: formula starts neutralised, null empty, an empty text quoted', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/clients`, {
    body: { libelle: '=HYPERLINK("http://evil")', logo: '' },
    headers: { 'X-Request-ID': '=1+2' },
  });
  const reply = await h.request('GET', `${CHANGES}?resource=clients&id=${made.body.id}`, {
    headers: { Accept: 'text/csv' },
  });
  const rows = reply.text.split('\r\n').filter(Boolean);
  const libelle = rows.find((row) => row.includes(',libelle,'))!;
  assert.match(libelle, /,'=1\+2,ClientCreated,/, 'the request id cannot run');
  assert.ok(libelle.endsWith(`,libelle,,"'=HYPERLINK(""http://evil"")"`), libelle);
  const logo = rows.find((row) => row.includes(',logo,'))!;
  assert.ok(logo.endsWith(',logo,,""'), `before null, after "": ${logo}`);
});

/** Every change of the log, page after page. */
async function allChanges(h: Harness): Promise<{ position: number; at: string }[]> {
  const rows: { position: number; at: string }[] = [];
  for (let page = `${CHANGES}?limit=100`; page; ) {
    const body = (await h.request('GET', page)).body;
    rows.push(...body.items);
    page = body.next;
  }
  return rows;
}

/**
 * The reference for times: the latest time so far at each position, over every event of the log
 * (those with no change row too), as the projector keeps it in hw_at; read plainly, row after row.
 */
async function latestTimes(h: Harness): Promise<Map<number, string>> {
  const events = await h.store.readStream(CONFIG_STREAM, { fromRevision: 0, maxCount: 10_000 });
  const highAt = new Map<number, string>();
  let high = '';
  for (const event of events) {
    const at = (event.metadata as { at: string }).at;
    high = at > high ? at : high;
    highAt.set(event.revision + 1, high);
  }
  return highAt;
}

it('times are found by bisecting the positions: a clock that goes back, positions with no change row', async () => {
  // Every fifth reading of the clock is 7 s behind the one before: event times are not in log order.
  let reads = 0;
  const clock = {
    now: () => new Date(Date.parse('2026-03-01T00:00:00.000Z') + 1000 * ++reads - (reads % 5 === 0 ? 7000 : 0)),
  };
  const h = await startHarness({ clock });
  try {
    for (let i = 0; i < 40; i++) {
      await h.request('POST', `${BASE}/tags`, { body: tag(`t${i}`) });
      // The same values again under an Idempotency-Key: a position in the log with no change row.
      if (i % 7 === 3)
        await h.request('PATCH', `${BASE}/tags/1`, { body: { name: 't0' }, headers: { 'Idempotency-Key': `k${i}` } });
    }
    const rows = await allChanges(h);
    const positions = rows.map((r) => r.position);
    assert.ok(
      positions.some((p, i) => i > 0 && p > positions[i - 1] + 1),
      'some positions hold no change row',
    );
    assert.ok(
      rows.some((r, i) => i > 0 && r.at < rows[i - 1].at),
      'some change comes before the one ahead of it in time',
    );
    const highAt = await latestTimes(h);
    const highs = positions.map((p) => highAt.get(p)!);
    const shift = (at: string, ms: number) => new Date(Date.parse(at) + ms).toISOString();
    const probes = [...new Set(rows.flatMap((r) => [shift(r.at, -1), r.at, shift(r.at, 1)]))];
    probes.push('2000-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z');
    for (const time of probes) {
      const later = highs.findIndex((hw) => hw > time);
      const expected = later === -1 ? positions[positions.length - 1] : positions[later] - 1;
      const list = (await h.request('GET', `${BASE}/tags?at=${encodeURIComponent(time)}&limit=1`)).body;
      assert.is(list.as_of.position, expected, `the list at ${time}`);
      const since = (await h.request('GET', `${CHANGES}?since=${encodeURIComponent(time)}&limit=1000`)).body;
      assert.equal(
        since.items.map((c: { position: number }) => c.position),
        rows.filter((r) => r.at >= time).map((r) => r.position),
        `changes since ${time}`,
      );
    }
  } finally {
    await h.close();
  }
});

it.run();
