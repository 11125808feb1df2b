import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GroupCommit } from '../../src/application/group-commit.js';
import { Projector } from '../../src/application/projector.js';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import { testClock } from '../support/harness.js';

const it = suite('the group-commit writer');

const caller = { actor: 'test', requestId: 'r' };

function writer(): GroupCommit {
  const store = new InMemoryEventStore();
  return new GroupCommit(store, new Projector(store, new SqliteReadModelStore(':memory:')), testClock());
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
  const projector = new Projector(store, new SqliteReadModelStore(':memory:'));
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

it.run();
