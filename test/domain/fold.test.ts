import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { diffOf, rowsOf } from '../../projections/changes.js';
import { evolve } from '../../src/domain/evolve.js';
import { collectionOf } from '../../src/domain/resources.js';
import { emptyState } from '../../src/domain/state.js';
import { fold, logged, serverCreated, tagCreated } from '../support/given.js';

const it = suite('the fold: given events / then state and effects');

const events = [
  tagCreated(1, 'a'),
  serverCreated(1, { tags: [1] }),
  { type: 'TagUpdated', data: { id: 1, changes: { name: 'b' } } },
  { type: 'ServerDeleted', data: { id: 1 } },
  { type: 'TagDeleted', data: { id: 1 } },
];

it('versions count events, timestamps come from the events, hard deletes leave a tombstone', () => {
  const { state } = fold(...events);
  const server = state.collections.servers.get(1)!;
  assert.equal([server.version, server.is_deleted, server.tags], [3, true, []]);
  assert.is(server.created_at, '2026-01-01T00:00:09.000Z');
  assert.is(server.updated_at, '2026-01-01T00:00:12.000Z');
  assert.not.ok(state.collections.tags.get(1));
  assert.equal(state.collections.tags.tombstone(1), { version: 2, created_at: '2026-01-01T00:00:08.000Z' });
  assert.is(state.collections.tags.lastId, 1);
});

it("a deleted tag is taken from every server that carried it, as an effect of the tag's one event", () => {
  const { effects } = fold(
    tagCreated(1),
    tagCreated(2),
    serverCreated(1, { tags: [1, 2] }),
    serverCreated(2, { tags: [1] }),
    serverCreated(3),
    { type: 'TagDeleted', data: { id: 1 } },
  );
  assert.equal(
    effects.at(-1)!.map((e) => [e.resource, e.id, e.revision, e.after?.tags ?? null]),
    [
      ['tags', 1, 1, null],
      ['servers', 1, 1, [2]],
      ['servers', 2, 1, []],
    ],
  );
});

it("a deleted client's soft-deleted servers move to client 99", () => {
  const { state } = fold(
    { type: 'ClientCreated', data: { id: 100, libelle: 'c', logo: '', is_monitored: true } },
    serverCreated(1, { id_client: 100 }),
    { type: 'ServerDeleted', data: { id: 1 } },
    { type: 'ClientDeleted', data: { id: 100 } },
  );
  const server = state.collections.servers.get(1)!;
  assert.equal([server.id_client, server.version], [99, 3]);
});

it('older events are upcast: a legacy TagDeleted leaves the servers to the ServerUpdated events after it', () => {
  const state = emptyState();
  const legacy = logged([
    tagCreated(1),
    serverCreated(1, { tags: [1] }),
    { type: 'TagDeleted', data: { id: 1 } },
    { type: 'ServerUpdated', data: { id: 1, changes: { tags: [] } } },
  ]).map((event) => ({ ...event, metadata: { ...event.metadata, schema: undefined } }));
  for (const event of legacy) evolve(state, event);
  const server = state.collections.servers.get(1)!;
  assert.equal([server.tags, server.version], [[], 2], 'the tag left once, by the recorded event');
  const current = emptyState();
  for (const event of legacy.slice(0, 3)) evolve(current, { ...event, metadata: { ...event.metadata, schema: 2 } });
  assert.equal(current.collections.servers.get(1)!.tags, [], 'a schema 2 TagDeleted takes the tag itself');
});

it('the fold refuses what the log and the state cannot both hold: a creation over an entry, a gap', () => {
  const state = emptyState();
  const [first, again] = logged([tagCreated(1, 'a'), tagCreated(1, 'b')]);
  evolve(state, first);
  assert.throws(() => evolve(state, again), /already exists/);
  assert.is(state.collections.tags.get(1)?.name, 'a');
  assert.throws(() => evolve(state, logged([tagCreated(2)], 5)[0]), /does not follow/);
  assert.is(state.revision, 0);
});

it('rows: a change per event, a version per entry changed, diffs with before and after, secrets redacted when shown', () => {
  const state = emptyState();
  const [created, changed] = logged([
    serverCreated(1),
    { type: 'ServerUpdated', data: { id: 1, changes: { passwd: 'v1:other', port: 1 } } },
  ]);
  const first = rowsOf(created, evolve(state, created), created.metadata.at);
  const { position, resource, entry_id, data } = first.change!;
  assert.equal([position, resource, entry_id, data.passwd], [1, 'servers', 1, '[redacted]']);
  assert.ok(first.versions[0].snapshot, 'a creation keeps a snapshot');
  const second = rowsOf(changed, evolve(state, changed), changed.metadata.at);
  assert.equal(second.change!.data, { id: 1, changes: { passwd: '[redacted]', port: 1 } });
  assert.equal(changed.data, { id: 1, changes: { passwd: 'v1:other', port: 1 } }, 'the event itself keeps its value');
  const [portOnly] = logged([{ type: 'ServerUpdated', data: { id: 1, changes: { port: 2 } } }], 2);
  assert.equal(rowsOf(portOnly, evolve(state, portOnly), 'now').change!.data, { id: 1, changes: { port: 2 } });
  assert.equal(second.versions[0].diff, [
    { field: 'port', before: 3306, after: 1 },
    { field: 'passwd', before: 'v1:sealed', after: 'v1:other' },
  ]);
});

it('diffs: every declared field and the soft-delete flag, null for absent, arrays by their content', () => {
  const { state } = fold(serverCreated(1, { tags: [1, 2] }), tagCreated(1));
  const server = state.collections.servers.get(1)!;
  const tag = state.collections.tags.get(1)!;
  // What the diff is meant to be, written plainly.
  const expected = (resource: string, before?: Record<string, unknown>, after?: Record<string, unknown>) => {
    const fields = [...collectionOf(resource).fieldNames, ...(resource === 'servers' ? ['is_deleted'] : [])];
    return fields.flatMap((field) => {
      const [was, is] = [before?.[field] ?? null, after?.[field] ?? null];
      return JSON.stringify(was) === JSON.stringify(is) ? [] : [{ field, before: was, after: is }];
    });
  };
  const cases: [string, Record<string, unknown> | undefined, Record<string, unknown> | undefined][] = [
    ['servers', undefined, server],
    ['servers', server, undefined],
    ['servers', server, { ...server, tags: [1, 2] }],
    ['servers', server, { ...server, tags: [2, 1], port: null, is_deleted: true, version: 9 }],
    ['tags', tag, { ...tag, name: 'other' }],
    ['tags', undefined, tag],
  ];
  for (const [resource, before, after] of cases) {
    const diff = diffOf(resource, before as never, after as never);
    assert.equal(diff, expected(resource, before, after));
  }
  assert.equal(diffOf('servers', server, { ...server, tags: [1, 2] } as never), [], 'equal arrays are no change');
  assert.equal(
    diffOf('servers', server, { ...server, port: null, is_deleted: true } as never).map((m) => m.field),
    ['port', 'is_deleted'],
  );
});

it.run();
