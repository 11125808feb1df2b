import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Projector } from '../../src/application/projector.js';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { leafOf } from '../../src/log/index.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import { logged, serverCreated, tagCreated } from '../support/given.js';

const it = suite('the projector: a batch folds whole or not at all, once');

const fresh = () => new Projector(new InMemoryEventStore(), new SqliteReadModelStore(':memory:'), leafOf);
const rows = (projector: Projector) =>
  JSON.stringify([...(projector as unknown as { readModels: SqliteReadModelStore }).readModels.lines()]);

it('the same events given twice are folded once: versions and read models do not move', () => {
  const projector = fresh();
  const events = logged([tagCreated(1), { type: 'TagUpdated', data: { id: 1, changes: { name: 'b' } } }]);
  assert.ok(projector.apply(events));
  const once = rows(projector);
  assert.ok(projector.apply(events));
  assert.ok(projector.apply(events.slice(1)));
  assert.equal([projector.revision, projector.state.collections.tags.get(1)?.version], [1, 2]);
  assert.is(rows(projector), once);
});

it('a gap is refused: nothing is folded', () => {
  const projector = fresh();
  projector.apply(logged([tagCreated(1)]));
  assert.not.ok(projector.apply(logged([tagCreated(3)], 2)));
  assert.equal([projector.revision, projector.state.collections.tags.get(3)], [0, undefined]);
});

it('an event the state cannot take undoes the batch it came with; the batch can then be folded once', () => {
  const projector = fresh();
  projector.apply(logged([tagCreated(1, 'a')]));
  const batch = logged(
    [
      { type: 'TagUpdated', data: { id: 1, changes: { name: 'b' } } },
      serverCreated(1, { tags: [1] }),
      tagCreated(1, 'again'),
    ],
    1,
  );
  assert.throws(() => projector.apply(batch), /already exists/);
  assert.equal(
    [
      projector.revision,
      projector.state.collections.tags.get(1)?.name,
      projector.state.collections.tags.get(1)?.version,
    ],
    [0, 'a', 1],
  );
  assert.equal([...projector.state.collections.servers.values()], []);
  assert.equal([...projector.state.collections.servers.referencing('tags', 1)], [], 'indexes are undone too');
  projector.apply(batch.slice(0, 2));
  assert.equal(
    [projector.revision, projector.state.collections.tags.get(1)?.version],
    [2, 2],
    'applied once, not twice',
  );
});

it('the stored checkpoint never moves back', () => {
  const readModels = new SqliteReadModelStore(':memory:');
  const later = new Projector(new InMemoryEventStore(), readModels, leafOf);
  later.apply(logged([tagCreated(1), tagCreated(2)]));
  later.flush();
  const behind = new Projector(new InMemoryEventStore(), readModels, leafOf);
  behind.apply(logged([tagCreated(1)]));
  behind.flush();
  const stored = readModels.load();
  assert.is(stored.state.revision, 1);
  assert.ok(stored.state.collections.tags.get(2), 'what the later save wrote is still there');
});

it.run();
