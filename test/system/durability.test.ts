import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import type { AppendResult, EventToAppend, ExpectedRevision } from '../../src/event-store/port.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { BASE, startHarness } from '../support/harness.js';
import { tempDir } from '../support/process.js';

const it = suite('durability: nothing is acknowledged before it is on disk');

it('the SQLite log is in WAL mode and flushes the log itself, as its own connection reports', async () => {
  const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
  try {
    assert.match(
      store.describe().durability,
      /journal_mode=wal synchronous=normal \+ fdatasync of the write-ahead log/,
    );
  } finally {
    await store.close();
  }
});

it('a SQLite append returns only after the write-ahead log is flushed, and wakes no subscriber before', async () => {
  let release = () => {};
  const synced: number[] = [];
  const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'), {
    sync: (fd) =>
      new Promise<void>((resolve) => {
        release = () => {
          synced.push(fd);
          resolve();
        };
      }),
  });
  const seen: number[] = [];
  const subscription = store.subscribe('s', 0, (event) => seen.push(event.revision));
  try {
    let returned = false;
    const appending = store
      .append('s', [{ type: 'T', data: {}, metadata: {} }], 'no_stream')
      .then(() => (returned = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.is(returned, false, 'the append returned before the flush');
    assert.equal(seen, [], 'a subscriber saw the event before the flush');
    release();
    await appending;
    assert.is(synced.length, 1);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(seen, [0]);
  } finally {
    await subscription.close();
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
