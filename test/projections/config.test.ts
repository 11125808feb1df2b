import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { project } from '../../projections/config.js';
import { historyRow } from '../../projections/history.js';
import { type ConfigEvent, emptyState } from '../../src/domain/state.js';
import { serverCreated, tagCreated } from '../support/given.js';

const it = suite('projections: pure folds over events');

const events = [
  tagCreated(1, 'a'),
  serverCreated(1, { tags: [1] }),
  { type: 'TagUpdated', data: { id: 1, changes: { name: 'b' } } },
  { type: 'ServerDeleted', data: { id: 1 } },
  { type: 'ServerUpdated', data: { id: 1, changes: { tags: [] } } },
  { type: 'TagDeleted', data: { id: 1 } },
] as ConfigEvent[];

const fold = () => {
  const state = emptyState();
  events.forEach((event, i) => project(state, event, `2026-01-01T00:00:0${i}.000Z`));
  return state;
};

it('versions count events, timestamps come from the events, hard deletes leave a tombstone', () => {
  const state = fold();
  const server = state.servers.entries.get(1)!;
  assert.equal(
    [server.version, server.is_deleted, server.tags, server.created_at, server.updated_at],
    [3, true, [], '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:04.000Z'],
  );
  assert.not.ok(state.tags.entries.has(1));
  assert.ok(state.tags.deleted.has(1));
  assert.is(state.tags.lastId, 1);
});

it('replaying the same events gives the same read model', () => {
  const a = fold();
  const b = fold();
  assert.equal(JSON.stringify([...a.servers.entries], null, 0), JSON.stringify([...b.servers.entries]));
  assert.equal([...a.tags.deleted], [...b.tags.deleted]);
});

it('the revision of an event in its entry stream is the version before it', () => {
  const state = emptyState();
  const revisions = events.map((event, i) => project(state, event, `2026-01-01T00:00:0${i}.000Z`)?.revision);
  assert.equal(revisions, [0, 0, 1, 1, 2, 2]);
});

it('history redacts secrets, also inside changes', () => {
  const created = historyRow('servers', 0, {
    position: 3,
    type: 'ServerCreated',
    data: serverCreated(1).data,
    metadata: { actor: 'a', request_id: 'r', at: 't', entry: 'server-1' },
  });
  assert.is(created.data.passwd, '[redacted]');
  const updated = historyRow('servers', 1, {
    position: 4,
    type: 'ServerUpdated',
    data: { id: 1, changes: { passwd: 'v1:x', port: 1 } },
    metadata: { actor: 'a', request_id: 'r', at: 't', entry: 'server-1' },
  });
  assert.equal(updated.data, { id: 1, changes: { passwd: '[redacted]', port: 1 } });
});

it.run();

const refold = suite('projections: a creation never overwrites');

refold('a Created event for an id that exists, or was deleted, is refused by the fold', () => {
  const state = emptyState();
  project(state, tagCreated(1, 'a') as ConfigEvent, '2026-01-01T00:00:00.000Z');
  assert.throws(() => project(state, tagCreated(1, 'b') as ConfigEvent, 't'), /already exists/);
  assert.is(state.tags.entries.get(1)?.name, 'a');
  project(state, { type: 'TagDeleted', data: { id: 1 } } as ConfigEvent, 't');
  assert.throws(() => project(state, tagCreated(1, 'c') as ConfigEvent, 't'), /already exists/);
});

refold.run();
