import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { tempDir } from '../support/process.js';

/**
 * The SQLite store, whose flushes to disk the test holds and releases: nothing this process wrote
 * is shown, to a read or a subscription, before it is on disk.
 */

const it = suite('the SQLite store shows nothing before its flush');

interface Held {
  resolve(): void;
  reject(error: Error): void;
}

function world(pollMs: number) {
  const flushes: Held[] = [];
  const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'), {
    pollMs,
    sync: () => new Promise<void>((resolve, reject) => flushes.push({ resolve, reject })),
  });
  return { store, flushes };
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

it("a subscription and a read never see this process's appends before they are on disk", async () => {
  const w = world(5);
  const seen: number[] = [];
  const subscription = w.store.subscribe(CONFIG_STREAM, 0, (event) => seen.push(event.revision));
  try {
    const durable = w.store.append(CONFIG_STREAM, [{ type: 'T', data: {}, metadata: {} }], 'no_stream');
    await until(() => w.flushes.length === 1, 'the flush');
    await pause(50); // ten polls
    assert.equal(seen, [], 'read before the flush');
    assert.equal(await w.store.readStream(CONFIG_STREAM), [], 'read before the flush');
    assert.is(await w.store.head(CONFIG_STREAM), -1);
    w.flushes[0].resolve();
    await durable;
    await until(() => seen.length === 1, 'the event, once on disk');
    assert.equal(seen, [0]);
    assert.is(await w.store.head(CONFIG_STREAM), 0);
  } finally {
    await subscription.close();
    await w.store.close();
  }
});

it("a read past this process's append on its way to disk waits for it when another process wrote after it", async () => {
  const file = join(tempDir(), 'events.sqlite');
  const flushes: Held[] = [];
  const here = new SqliteEventStore(file, {
    sync: () => new Promise<void>((resolve, reject) => flushes.push({ resolve, reject })),
  });
  const there = new SqliteEventStore(file);
  try {
    const mine = here.append(CONFIG_STREAM, [{ type: 'Mine', data: {}, metadata: {} }], 'no_stream');
    await until(() => flushes.length === 1, 'the flush');
    // The other process appends after it and has its append acknowledged.
    await there.append(CONFIG_STREAM, [{ type: 'Theirs', data: {}, metadata: {} }], 0);
    let answered = false;
    const read = here.readStream(CONFIG_STREAM).then((events) => {
      answered = true;
      return events;
    });
    const head = here.head(CONFIG_STREAM);
    await pause(30);
    assert.not.ok(answered, 'no answer without the event acknowledged elsewhere');
    flushes[0].resolve();
    await mine;
    assert.equal(
      (await read).map((event) => event.type),
      ['Mine', 'Theirs'],
    );
    assert.is(await head, 1);
  } finally {
    await here.close();
    await there.close();
  }
});

it('a flush that fails fails its append (503), and the next append is on disk on its own flush', async () => {
  const w = world(5);
  try {
    const first = w.store.append(CONFIG_STREAM, [{ type: 'T', data: {}, metadata: {} }], 'no_stream');
    await until(() => w.flushes.length === 1, 'the first flush');
    w.flushes[0].reject(new Error('EIO'));
    await first.then(
      () => assert.unreachable('acknowledged without its flush'),
      (error: Error & { status?: number }) => assert.match(error.message, /could not be flushed/),
    );
    const second = w.store.append(CONFIG_STREAM, [{ type: 'T', data: {}, metadata: {} }], 0);
    await until(() => w.flushes.length === 2, 'the second flush');
    w.flushes[1].resolve();
    assert.equal((await second).nextRevision, 1);
  } finally {
    await w.store.close();
  }
});

it.run();
