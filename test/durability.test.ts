import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InMemoryEventStore } from '../src/event-store/in-memory/store.js';
import type { AppendResult, EventToAppend, ExpectedRevision } from '../src/event-store/port.js';
import { SqliteEventStore } from '../src/event-store/sqlite/store.js';
import { BASE, startHarness } from './support/harness.js';
import { tempDir } from './support/process.js';

const it = suite('durability: nothing is acknowledged before it is on disk');

it('the SQLite log syncs every append to disk (WAL, synchronous FULL), as its own connection reports', async () => {
  const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
  try {
    assert.match(store.describe().durability, /journal_mode=wal synchronous=full/);
  } finally {
    await store.close();
  }
});

/** Appends wait for `release()`; `order` records what happened when. */
class GatedStore extends InMemoryEventStore {
  order: string[] = [];
  private gate?: Promise<void>;
  release: () => void = () => {};

  close_gate(): void {
    this.gate = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  override async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    this.order.push('append started');
    await this.gate;
    const result = await super.append(stream, events, expected);
    this.order.push('append done');
    return result;
  }
}

it('a write is answered only after its append has returned', async () => {
  const store = new GatedStore();
  const h = await startHarness({ store });
  try {
    store.order.length = 0;
    store.close_gate();
    const answer = h
      .request('POST', `${BASE}/tags`, { body: { name: 'a', color: '#000000', background: '#FFFFFF' } })
      .then((reply) => store.order.push(`answered ${reply.status}`));
    while (store.order.length === 0) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 50)); // room for an early answer to show itself
    store.release();
    await answer;
    assert.equal(store.order, ['append started', 'append done', 'answered 201']);
  } finally {
    await h.close();
  }
});

it.run();
