import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GroupCommit } from '../../src/application/group-commit.js';
import { Projector } from '../../src/application/projector.js';
import type { ConfigState } from '../../src/domain/state.js';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { type EventToAppend, type ExpectedRevision, StoreUnavailable } from '../../src/event-store/port.js';
import { leafOf } from '../../src/log/index.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import { testClock } from '../support/harness.js';

const it = suite('the group-commit writer');

const caller = { actor: 'test', requestId: 'r' };

function writer(): GroupCommit {
  const store = new InMemoryEventStore();
  return new GroupCommit(store, new Projector(store, new SqliteReadModelStore(':memory:'), leafOf), testClock());
}

const tag = (id: number) => ({
  caller,
  decide: () => [{ type: 'TagCreated', data: { id, name: `t${id}`, color: '#000000', background: '#FFFFFF' } }],
  answer: () => id,
});

/** Never settles: the caller would wait forever. */
const within = <T>(promise: Promise<T>, what: string) =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer`)), 2_000)),
  ]);

it('a command submitted as the previous answer arrives is taken, whatever the await depth of the caller', async () => {
  // The writer once stranded a command submitted between its last queue check and the moment it
  // marked itself idle: the caller waited forever. Each depth below lands in another microtask.
  const w = writer();
  let id = 0;
  for (let depth = 0; depth < 8; depth++) {
    let call = (job: ReturnType<typeof tag>) => w.submit(job);
    for (let i = 0; i < depth; i++) {
      const inner = call;
      call = async (job) => await inner(job);
    }
    for (let round = 0; round < 5; round++) {
      id++;
      assert.is(await within(call(tag(id)), `depth ${depth}, command ${id}`), id);
    }
  }
});

it('an internal failure after the append answers every command of its batch; the next ones are taken', async () => {
  const store = new InMemoryEventStore();
  const projector = new Projector(store, new SqliteReadModelStore(':memory:'), leafOf);
  const w = new GroupCommit(store, projector, testClock());
  const apply = projector.apply.bind(projector);
  projector.apply = () => {
    projector.apply = apply;
    throw new Error('the fold broke');
  };
  const first = await within(
    w.submit(tag(1)).then(
      () => 'answered',
      (error: Error) => error.message,
    ),
    'the command whose fold broke',
  );
  assert.is(first, 'the fold broke');
  assert.is(await within(w.submit(tag(2)), 'the next command'), 2);
});

/**
 * A store where another instance appends first, `rivals` times: before each of this writer's appends,
 * a tag of the other instance lands at the head, so the append's expected revision is stale.
 */
class RacedStore extends InMemoryEventStore {
  appends = 0;
  constructor(private rivals: number) {
    super();
  }

  override async append(stream: string, events: EventToAppend[], expected: ExpectedRevision) {
    this.appends++;
    if (this.rivals > 0) {
      this.rivals--;
      const head = (await this.head(stream)) ?? -1;
      const id = 1000 + this.rivals;
      const data = { id, name: `rival${id}`, color: '#000000', background: '#FFFFFF' };
      await super.append(
        stream,
        [{ type: 'TagCreated', data, metadata: { actor: 'other', request_id: 'r', at: '2026-01-01T00:00:00.000Z' } }],
        head === -1 ? 'no_stream' : head,
      );
    }
    return super.append(stream, events, expected);
  }
}

it('a batch that lost the race to another instance is decided again on the newer state, and lands once', async () => {
  const store = new RacedStore(5);
  const w = new GroupCommit(store, new Projector(store, new SqliteReadModelStore(':memory:'), leafOf), testClock());
  const seen: number[] = [];
  const job = {
    caller,
    decide: (state: ConfigState) => {
      seen.push(state.collections.tags.size);
      return tag(1).decide();
    },
    answer: () => 1,
  };
  assert.is(await within(w.submit(job), 'the raced command'), 1);
  assert.is(store.appends, 6, 'five lost appends, then the sixth lands');
  assert.equal(seen, [0, 1, 2, 3, 4, 5], 'each attempt decided on the state with the rival writes before it');
  const ours = (await store.readStream('pmacontrol-config', { fromRevision: 0 })).filter(
    (e) => (e.data as { id: number }).id === 1,
  );
  assert.is(ours.length, 1, 'appended once');
});

it('past its bound (25 attempts) the batch is refused as unavailable, and nothing of it is appended', async () => {
  const store = new RacedStore(1000);
  const w = new GroupCommit(store, new Projector(store, new SqliteReadModelStore(':memory:'), leafOf), testClock());
  const outcome = await within(
    w.submit(tag(1)).then(
      () => undefined,
      (error: Error) => error,
    ),
    'the command that never wins',
  );
  assert.instance(outcome, StoreUnavailable);
  assert.match(outcome!.message, /too many concurrent writes/);
  assert.is(store.appends, 25, 'tried 25 times, no more');
  const ours = (await store.readStream('pmacontrol-config', { fromRevision: 0 })).filter(
    (e) => (e.data as { id: number }).id === 1,
  );
  assert.is(ours.length, 0);
});

it.run();
