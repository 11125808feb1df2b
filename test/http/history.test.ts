import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { type EventToAppend, type ExpectedRevision, StoreUnavailable } from '../../src/event-store/port.js';
import { BASE, startHarness } from '../support/harness.js';

const it = suite('history items and an unreachable store');

it('a history item has position, revision, type, at, actor, request_id and the data the event set', async () => {
  const h = await startHarness();
  try {
    const made = await h.request('POST', `${BASE}/tags`, {
      body: { name: 'h', color: '#000000', background: '#FFFFFF' },
      headers: { 'X-Request-ID': 'ansible-run-7' },
    });
    await h.request('PATCH', `${BASE}/tags/${made.body.id}`, { body: { color: '#123456' } });
    const items = (await h.request('GET', `${BASE}/tags/${made.body.id}/history`)).body.items;
    assert.equal(
      items.map((i: { revision: number }) => i.revision),
      [0, 1],
    );
    assert.ok(items[0].position < items[1].position);
    assert.equal([items[0].type, items[0].actor, items[0].request_id], ['TagCreated', 'anonymous', 'ansible-run-7']);
    assert.equal(items[0].data, { id: made.body.id, name: 'h', color: '#000000', background: '#FFFFFF' });
    assert.equal([items[1].type, items[1].data], ['TagUpdated', { id: made.body.id, changes: { color: '#123456' } }]);
    assert.is(items[1].at, (await h.request('GET', `${BASE}/tags/${made.body.id}`)).body.item.updated_at);
    const genesis = (await h.request('GET', `${BASE}/environments/1/history`)).body.items;
    assert.equal([genesis[0].position, genesis[0].actor], [1, 'system']);
  } finally {
    await h.close();
  }
});

it("a creation's diff is not stored twice: it reads as every field set, from nothing", async () => {
  const h = await startHarness();
  try {
    const made = await h.request('POST', `${BASE}/tags`, {
      body: { name: 'h', color: '#000000', background: '#FFFFFF' },
    });
    await h.request('PATCH', `${BASE}/tags/${made.body.id}`, { body: { color: '#123456' } });
    const items = (await h.request('GET', `${BASE}/tags/${made.body.id}/history`)).body.items;
    assert.equal(items[0].diff, [
      { field: 'name', before: null, after: 'h' },
      { field: 'color', before: null, after: '#000000' },
      { field: 'background', before: null, after: '#FFFFFF' },
    ]);
    assert.equal(items[1].diff, [{ field: 'color', before: '#000000', after: '#123456' }]);
    // Stored: the creation keeps its snapshot and no diff; the change keeps its diff.
    const stored = [...h.readModels.lines()]
      .filter(({ table, key }) => table === 'versions' && key.startsWith(`tags/${made.body.id}/`))
      .map(({ value }) => JSON.parse(value) as [number, string | null, number, string | null]);
    assert.equal(
      stored.map(([, diff, , snapshot]) => [diff === null, snapshot === null]),
      [
        [true, false],
        [false, true],
      ],
    );
  } finally {
    await h.close();
  }
});

it('POST with is_deleted true is a 422; false is accepted and ignored', async () => {
  const h = await startHarness();
  try {
    const body = { id_client: 99, id_environment: 1, name: 'd', ip: '10.0.0.1', login: 'l', passwd: 'p' };
    assert.is((await h.request('POST', `${BASE}/servers`, { body: { ...body, is_deleted: true } })).status, 422);
    const made = await h.request('POST', `${BASE}/servers`, { body: { ...body, is_deleted: false } });
    assert.equal([made.status, made.body.item.is_deleted], [201, false]);
  } finally {
    await h.close();
  }
});

/** The port's in-memory adapter with appends failing as an unreachable server's would. */
class UnreachableOnAppend extends InMemoryEventStore {
  down = false;
  override async append(stream: string, events: EventToAppend[], expected: ExpectedRevision) {
    if (this.down) throw new StoreUnavailable('connection refused');
    return super.append(stream, events, expected);
  }
}

it('503 unavailable when the store cannot be reached; nothing is written; service resumes after', async () => {
  const store = new UnreachableOnAppend();
  const h = await startHarness({ store });
  try {
    const before = (await store.readAll()).length;
    store.down = true;
    const refused = await h.request('POST', `${BASE}/tags`, {
      body: { name: 'x', color: '#000000', background: '#FFFFFF' },
    });
    assert.equal([refused.status, refused.body.code, refused.headers.get('retry-after')], [503, 'unavailable', '1']);
    assert.is((await store.readAll()).length, before);
    assert.is((await h.request('GET', `${BASE}/tags`)).body.total, 0);
    store.down = false;
    assert.is(
      (await h.request('POST', `${BASE}/tags`, { body: { name: 'x', color: '#000000', background: '#FFFFFF' } }))
        .status,
      201,
    );
  } finally {
    await h.close();
  }
});

it.run();
