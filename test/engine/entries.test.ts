// Entries written through the API share V8's hidden classes: at 100,000 servers, a hidden class of
// its own per entry (what spreading a large object then adding fields gives) cost about 90 MiB and
// a property array of 1 KB each, which took the service past 600 MiB. V8 only tells this to a
// process started with --allow-natives-syntax, so the writes run in one (test/fixtures/entry-shapes.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { entryOf, stamped } from '../../src/engine/entries.js';
import type { EntryRecord } from '../../src/engine/table.js';

test('created, patched, replaced and re-sealed servers share one hidden class, with fast properties', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', 'test/fixtures/entry-shapes.ts'],
    { timeout: 60_000 },
  );
  const seen = JSON.parse(stdout.trim().split('\n').pop()!) as {
    versions: number[];
    sameMap: string[];
    fast: boolean[];
    resealed: string;
  };
  // Servers 1 and 4 as created; 2 and 5 patched; 3 and 6 replaced (PUT).
  assert.equal(seen.versions, [1, 2, 2, 1, 2, 2]);
  assert.equal(seen.fast, [true, true, true, true, true, true]);
  // Created (entryOf), patched (stamped) and replaced: object literals with the same keys in the
  // same order, so one hidden class for the six.
  assert.equal(seen.sameMap, Array(6).fill('111111'), 'created, patched and replaced servers share one hidden class');
  // A key rotation's re-sealed entries too, with fast properties.
  assert.is(seen.resealed, '111111');
});

test('an updated entry is the entry with its changes, its keys in the same order, whatever its shape', () => {
  const spread = (entry: EntryRecord, changes: Record<string, unknown>, at: string) =>
    JSON.stringify({ ...entry, ...changes, version: entry.version + 1, updated_at: at });
  const server = { id: 7, name: 'db', port: 3306, tags: [1], version: 3, created_at: 'c', updated_at: 'u' };
  const tag = { id: 2, name: 't', color: '#000000', version: 1, created_at: 'c', updated_at: 'u' };
  const odd = { id: 1, 'not an identifier': 'x', '"quoted"': 'y', version: 1, updated_at: 'u' };
  // Shapes interleaved: each copy follows its own entry's keys, never another shape's.
  for (const [entry, changes] of [
    [server, { port: 3307 }],
    [tag, { color: '#FFFFFF', name: 'u' }],
    [server, { tags: [1, 2] }],
    [odd, { 'not an identifier': 'z' }],
    [tag, { extra: true }],
  ] as [EntryRecord, Record<string, unknown>][]) {
    const next = stamped(entry, changes, 'now');
    assert.is(JSON.stringify(next), spread(entry, changes, 'now'));
    assert.is.not(next, entry);
  }
  assert.is(server.port, 3306, 'the entry itself is left as it was');
});

test('a "__proto__" key in a log is a field of the entry, never its prototype', () => {
  const parsed = JSON.parse('{"id": 1, "__proto__": {"polluted": true}, "version": 1, "updated_at": "u"}');
  const changes = JSON.parse('{"__proto__": {"polluted": "again"}}');
  const made = [
    entryOf(parsed, { version: 1 }),
    stamped(parsed, { name: 'x' }, 'now'),
    stamped({ id: 2, version: 1 } as EntryRecord, changes, 'now'),
  ];
  for (const entry of made) {
    assert.is(Object.getPrototypeOf(entry), Object.prototype);
    assert.is((entry as { polluted?: unknown }).polluted, undefined);
    assert.ok(Object.hasOwn(entry, '__proto__'), JSON.stringify(entry));
  }
  assert.is(JSON.stringify(made[1]), JSON.stringify({ ...parsed, name: 'x', version: 2, updated_at: 'now' }));
});

test('past the bound on shapes, entries are still made whole and in order', () => {
  for (let i = 0; i < 300; i++) {
    const parts = [
      { id: i, [`field_${i}`]: i },
      { version: 1, id: -i },
    ];
    assert.is(JSON.stringify(entryOf(...parts)), JSON.stringify(Object.assign({}, ...parts)));
  }
});

test.run();
