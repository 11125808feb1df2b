import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/event-store/port.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { tempDir } from '../support/process.js';

/**
 * After an append, the SQLite store wakes only the subscriptions it has something for: one whose
 * subscriber folded the append itself (the projector moves it on with `skipTo`) is left asleep,
 * and does not read the log again for nothing; one behind the append is woken and sent it.
 */

const it = suite('subscriptions woken by an append of this process');

const STREAM = 'config';
const event = (n: number) => ({ type: 'TagCreated', data: { id: n }, metadata: { actor: 't', at: '' } });
const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

it('a subscription past the append is not woken; one behind it reads it', async () => {
  // No poll within the test: only wakes make a subscription read.
  const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'), { pollMs: 60_000 });
  type Statement = { all: (...args: unknown[]) => unknown };
  const { statements } = store as unknown as { statements: { stream: Statement; streamBefore: Statement } };
  let reads = 0;
  for (const statement of [statements.stream, statements.streamBefore]) {
    const all = statement.all.bind(statement);
    statement.all = (...args: unknown[]) => {
      reads += 1;
      return all(...args);
    };
  }
  const folding: RecordedEvent[] = [];
  const behind: RecordedEvent[] = [];
  const projector = store.subscribe(STREAM, 0, (e) => folding.push(e));
  store.subscribe(STREAM, 0, (e) => behind.push(e));
  await settle();
  const before = reads;
  for (let n = 0; n < 3; n++) {
    const { nextRevision } = await store.append(STREAM, [event(n)], n === 0 ? 'no_stream' : n - 1);
    projector.skipTo!(nextRevision + 1); // as the projector does once it has folded its own append
    await settle();
  }
  assert.equal(folding, [], 'the folding subscription is never sent its own appends');
  assert.equal(
    behind.map((e) => e.revision),
    [0, 1, 2],
  );
  // The subscription behind reads twice per append (the event, then nothing more); the other, never.
  assert.is(reads - before, 6, 'only the subscription behind the appends read the log');
  await store.close();
});

it.run();
