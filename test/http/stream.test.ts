import { EventSource } from 'eventsource';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, send, startHarness } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';

const STREAM = '/fr/api/changes/stream';
const tag = (name: string) => ({ name, color: '#000000', background: '#FFFFFF' });

interface Received {
  id: string;
  change: { position: number; type: string; resource: string; id: number; effects: unknown[] };
}

/** A real EventSource client that keeps what it receives. */
function listen(url: string, init?: { lastEventId?: string }): { source: EventSource; received: Received[] } {
  const received: Received[] = [];
  const source = new EventSource(url, {
    fetch: (input, options) =>
      fetch(input, {
        ...options,
        headers: { ...options?.headers, ...(init?.lastEventId ? { 'Last-Event-ID': init.lastEventId } : {}) },
      }),
  });
  source.addEventListener('change', (event) =>
    received.push({ id: event.lastEventId, change: JSON.parse(event.data) }),
  );
  return { source, received };
}

async function until(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > limitMs) throw new Error(`still waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const it = suite<{ h: Harness }>('the live change feed: GET /fr/api/changes/stream (Server-Sent Events)');
it.before.each(async (ctx) => {
  ctx.h = await startHarness({ keepAliveMs: 100 });
});
it.after.each(async ({ h }) => h.close());

it('new changes arrive as events: id is the position, data the change, filters apply', async ({ h }) => {
  const all = listen(`${h.url}${STREAM}`);
  const servers = listen(`${h.url}${STREAM}?resource=servers`);
  await until(
    () => all.source.readyState === EventSource.OPEN && servers.source.readyState === EventSource.OPEN,
    'open',
  );
  const t = (await h.request('POST', `${BASE}/tags`, { body: tag('a') })).body.id;
  const s = await h.request('POST', `${BASE}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 's', ip: '10.0.0.1', login: 'l', passwd: 'p', tags: [t] },
  });
  await h.request('DELETE', `${BASE}/tags/${t}`);
  await until(() => all.received.length === 3 && servers.received.length === 2, 'three changes');
  all.source.close();
  servers.source.close();
  assert.equal(
    all.received.map((r) => [Number(r.id), r.change.position, r.change.type]),
    [
      [9, 9, 'TagCreated'],
      [10, 10, 'ServerCreated'],
      [11, 11, 'TagDeleted'],
    ],
  );
  assert.equal(
    servers.received.map((r) => r.change.type),
    ['ServerCreated', 'TagDeleted'],
    'the tag deletion changed the server',
  );
  assert.is(servers.received[1].change.effects.length, 1);
  assert.is(s.status, 201);
});

it('resumes after Last-Event-ID or ?after=, missing nothing; keep-alive comments while nothing happens', async ({
  h,
}) => {
  for (const name of ['a', 'b', 'c']) await h.request('POST', `${BASE}/tags`, { body: tag(name) });
  const byHeader = listen(`${h.url}${STREAM}`, { lastEventId: '9' });
  const byQuery = listen(`${h.url}${STREAM}?after=8&type=TagCreated`);
  await until(() => byHeader.received.length === 2 && byQuery.received.length === 3, 'the backlog');
  await h.request('POST', `${BASE}/tags`, { body: tag('d') });
  await until(() => byHeader.received.length === 3 && byQuery.received.length === 4, 'the live change');
  byHeader.source.close();
  byQuery.source.close();
  assert.equal(
    byHeader.received.map((r) => r.change.position),
    [10, 11, 12],
  );
  assert.equal(
    byQuery.received.map((r) => r.change.position),
    [9, 10, 11, 12],
  );
  const raw = await fetch(`${h.url}${STREAM}`);
  const reader = raw.body!.getReader();
  let text = '';
  while (!text.includes(': keep-alive')) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  assert.match(text, /^: connected/);
  assert.equal([raw.status, raw.headers.get('cache-control')], [200, 'no-store']);
  assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
});

it('a catch-up longer than a page: every change once, in order, then live', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'paged' } });
  for (let i = 0; i < 450; i++) await h.request('PATCH', `${BASE}/clients/${made.body.id}`, { body: { logo: `${i}` } });
  const feed = listen(`${h.url}${STREAM}?after=0`);
  await until(() => feed.received.length >= 450 + 8, 'the backlog, a page at a time');
  await h.request('PATCH', `${BASE}/clients/${made.body.id}`, { body: { logo: 'live' } });
  await until(() => feed.received.length === 450 + 8 + 2, 'the live change');
  feed.source.close();
  const positions = feed.received.map((r) => r.change.position);
  assert.equal(
    positions,
    Array.from({ length: positions.length }, (_, i) => i + 1),
  );
});

it('a catch-up paced by a slow reader leaves no listener behind on its response', async ({ h }) => {
  const tags = Array.from({ length: 6000 }, (_, i) => ({ id: i + 1, ...tag(`slow-${i}-${'x'.repeat(40)}`) }));
  const { token } = await h.service.write.issueToken(
    { name: 'importer', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const imported = await h.request('POST', '/fr/api/import', {
    body: { format: 'pmacontrol-config/1', resources: { tags } },
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.is(imported.status, 200, imported.text);
  const warnings: string[] = [];
  const heard = (warning: Error) => warnings.push(warning.name);
  process.on('warning', heard);
  try {
    // A client that reads a little every few milliseconds: the catch-up waits for it many times.
    const response = await fetch(`${h.url}${STREAM}?after=0`);
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes(`id: ${h.service.revision + 1}\n`)) {
      received = (received + new TextDecoder().decode((await reader.read()).value)).slice(-1000);
      await new Promise((r) => setTimeout(r, 2));
    }
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(warnings, []);
  } finally {
    process.off('warning', heard);
  }
});

it('a bad filter is a 400 before the stream starts', async ({ h }) => {
  assert.is((await send(h.url, 'GET', `${STREAM}?resource=widgets`)).status, 400);
  assert.is((await send(h.url, 'GET', `${STREAM}?since=2026-01-01T00:00:00Z`)).status, 400);
  assert.is((await send(h.url, 'GET', STREAM, { headers: { 'Last-Event-ID': 'x' } })).status, 400);
});

it.run();

const instances = suite('the live change feed across two instances');

instances('changes made through one instance appear on the other, in order, none missing, none twice', async () => {
  const dataDir = tempDir();
  const a = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '20' });
  const b = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '20' });
  const feed = listen(`${b.url}${STREAM}`);
  try {
    await until(() => feed.source.readyState === EventSource.OPEN, 'open');
    const writes = [];
    for (let i = 0; i < 40; i++)
      writes.push(send(i % 3 ? a.url : b.url, 'POST', `${BASE}/tags`, { body: tag(`t${i}`) }));
    await Promise.all(writes);
    await until(() => feed.received.length === 40, '40 changes on instance b');
    const positions = feed.received.map((r) => r.change.position);
    assert.equal(
      positions,
      [...positions].sort((x, y) => x - y),
    );
    assert.is(new Set(positions).size, 40);
    assert.equal(
      positions,
      Array.from({ length: 40 }, (_, i) => positions[0] + i),
    );
  } finally {
    feed.source.close();
    await Promise.all([a.stop(), b.stop()]);
  }
});

instances.run();
