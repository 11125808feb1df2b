import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIG_STREAM, Projector } from '../../src/application/projector.js';
import { Writer } from '../../src/application/writer.js';
import type { ConfigState } from '../../src/domain/state.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import { testClock } from '../support/harness.js';
import { tempDir } from '../support/process.js';

/**
 * The writer over the SQLite store, whose flushes to disk the test holds and releases: while one
 * batch waits for the disk, the next is decided on the state that batch leaves and written after
 * it; nothing is folded or answered before its own flush, and answers come in log order.
 */

const it = suite('the writer overlaps the disk (SQLite)');

const caller = { actor: 'test', requestId: 'r' };

/** Creates a tag, refused when its name is taken in the state the command is decided on. */
const createTag = (id: number, name: string) => ({
  caller,
  decide: (state: ConfigState) => {
    if (state.collections.tags.inOrder().some((tag) => tag.name === name)) throw new Error(`name ${name} is taken`);
    return [{ type: 'TagCreated', data: { id, name, color: '#000000', background: '#FFFFFF' } }];
  },
  answer: () => id,
});

interface Held {
  resolve(): void;
  reject(error: Error): void;
}

function world(pollMs = 100) {
  const flushes: Held[] = [];
  const file = join(tempDir(), 'events.sqlite');
  const store = new SqliteEventStore(file, {
    pollMs,
    sync: () => new Promise<void>((resolve, reject) => flushes.push({ resolve, reject })),
  });
  const projector = new Projector(store, new SqliteReadModelStore(':memory:'));
  const writer = new Writer(store, projector, testClock());
  const log: string[] = [];
  const tags = () => projector.state.collections.tags.inOrder().map((tag) => tag.id);
  // What the file holds, flushed or not, as another process reads it (this one shows only what is on disk).
  const logged = async () => {
    const other = new SqliteEventStore(file, { pollMs });
    try {
      return (await other.readStream(CONFIG_STREAM)).map((event) => (event.data as { id: number }).id);
    } finally {
      await other.close();
    }
  };
  return { store, projector, writer, flushes, log, tags, logged, file };
}

/** Waits (up to 2 s) until `ready()` holds. */
async function until(ready: () => boolean, what: string): Promise<void> {
  const limit = Date.now() + 2000;
  while (!ready()) {
    if (Date.now() > limit) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('the next batch is decided on the flushing one and written after it; each answered after its own flush', async () => {
  const w = world();
  try {
    const a = w.writer.submit(createTag(1, 'a')).then(() => w.log.push('a'));
    await until(() => w.flushes.length === 1, 'the first flush');
    const b = w.writer.submit(createTag(2, 'a')).catch((error: Error) => w.log.push(`b: ${error.message}`));
    const c = w.writer.submit(createTag(3, 'c')).then(() => w.log.push('c'));
    await until(() => w.flushes.length === 2, 'the second batch written while the first waits for the disk');
    assert.equal(
      await w.logged(),
      [1, 3],
      'the second batch follows the first in the log; b was refused on its effects',
    );
    await pause(20);
    assert.equal(w.log, [], 'nothing answered before its flush');
    assert.equal(w.tags(), [], 'nothing folded before its flush');

    w.flushes[0].resolve();
    await a;
    await pause(20);
    assert.equal(w.log, ['a'], 'the second batch waits for its own flush');
    assert.equal(w.tags(), [1]);

    w.flushes[1].resolve();
    await Promise.all([b, c]);
    assert.equal(w.log, ['a', 'b: name a is taken', 'c']);
    assert.equal(w.tags(), [1, 3]);
  } finally {
    await w.store.close();
  }
});

it('a flush that fails refuses its batch (503); the batch written after it is answered on its own flush', async () => {
  const w = world();
  try {
    const a = w.writer.submit(createTag(1, 'a')).catch((error: Error) => w.log.push(`a: ${error.name}`));
    await until(() => w.flushes.length === 1, 'the first flush');
    const c = w.writer.submit(createTag(3, 'c')).then(() => w.log.push('c'));
    await until(() => w.flushes.length === 2, 'the second flush');
    w.flushes[0].reject(new Error('EIO'));
    await a;
    assert.equal(w.log, ['a: StoreUnavailable']);
    w.flushes[1].resolve();
    await c;
    assert.equal(w.log, ['a: StoreUnavailable', 'c']);
    // As after any failed flush, the refused batch's events are in the log: the state folds them.
    assert.equal(w.tags(), [1, 3]);
    assert.equal(await w.logged(), [1, 3]);
  } finally {
    await w.store.close();
  }
});

it('a refusal decided behind a flushing batch is decided again on the log as it is: another process wrote', async () => {
  const w = world();
  try {
    const a = w.writer.submit(createTag(1, 'a')).then(() => w.log.push('a'));
    await until(() => w.flushes.length === 1, 'the first flush');
    const other = new SqliteEventStore(w.file);
    const b = { type: 'TagCreated', data: { id: 2, name: 'b', color: '#000000', background: '#FFFFFF' } };
    await other.append(CONFIG_STREAM, [{ ...b, metadata: { actor: 'other', request_id: 'o', at: 'x' } }], 0);
    await other.close();
    const needsB = {
      caller,
      decide: (state: ConfigState) => {
        if (!state.collections.tags.inOrder().some((tag) => tag.name === 'b')) throw new Error('no tag b');
        return [{ type: 'TagCreated', data: { id: 3, name: 'c', color: '#000000', background: '#FFFFFF' } }];
      },
      answer: () => 3,
    };
    const c = w.writer.submit(needsB).then(
      () => w.log.push('c'),
      (error: Error) => w.log.push(`c: ${error.message}`),
    );
    await pause(20);
    w.flushes[0].resolve();
    await a;
    await until(() => w.flushes.length === 2, 'c decided again, after the catch-up, and written');
    w.flushes[1].resolve();
    await c;
    assert.equal(w.log, ['a', 'c'], 'not refused on the state before the other process wrote');
    assert.equal(w.tags(), [1, 2, 3]);
  } finally {
    await w.store.close();
  }
});

it("a subscription never reads this process's appends before they are on disk", async () => {
  const w = world(5);
  const seen: number[] = [];
  const subscription = w.store.subscribe(CONFIG_STREAM, 0, (event) => seen.push(event.revision));
  try {
    const { durable } = w.store.commit(CONFIG_STREAM, [{ type: 'T', data: {}, metadata: {} }], 'no_stream');
    await until(() => w.flushes.length === 1, 'the flush');
    await pause(50); // ten polls
    assert.equal(seen, [], 'read before the flush');
    w.flushes[0].resolve();
    await durable;
    await until(() => seen.length === 1, 'the event, once on disk');
    assert.equal(seen, [0]);
  } finally {
    await subscription.close();
    await w.store.close();
  }
});

it.run();
