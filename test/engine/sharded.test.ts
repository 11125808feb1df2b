import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ShardedMap, ShardedSet, ShardedWeakMap, shardOf } from '../../src/engine/sharded.js';
import { random } from '../support/random.js';

/**
 * The sharded Map and Set behave as a Map and a Set, before and after they split themselves (at
 * 8,192 entries): 40,000 seeded random sets, replacements and deletes, number and string keys,
 * checked against the built-in ones along the way.
 */

const sorted = <T>(values: Iterable<T>) => [...values].sort();

for (const [kind, keyOf] of [
  ['number', (n: number) => n * 11], // spread over every shard's runs of ids
  ['string', (n: number) => `s${n}:name-${n * 7}`],
] as const) {
  test(`ShardedMap with ${kind} keys is a Map, across its split`, () => {
    const next = random(kind.length);
    const model = new Map<number | string, number>();
    const map = new ShardedMap<number | string, number>();
    for (let step = 0; step < 40_000; step++) {
      const key = keyOf(next(20_000));
      if (next(4) === 0) assert.is(map.delete(key), model.delete(key));
      else {
        map.set(key, step);
        model.set(key, step);
      }
      assert.is(map.size, model.size);
      if (step % 5000 !== 4999) continue;
      assert.equal(sorted(map.keys()), sorted(model.keys()));
      for (const [k, v] of model) assert.is(map.get(k), v);
      assert.equal(sorted(map.values()), sorted(model.values()));
    }
    assert.ok(model.size > 8192, 'the map did split');
    for (let n = 20_000; n < 20_100; n++) assert.is(map.has(keyOf(n)), false);
  });
}

test('ShardedSet is a Set of ids, across its split', () => {
  const next = random(7);
  const model = new Set<number>();
  const set = new ShardedSet([1, 2, 3]);
  for (const id of [1, 2, 3]) model.add(id);
  for (let step = 0; step < 40_000; step++) {
    const id = next(20_000) * 11; // spread over every shard's runs of ids
    if (next(4) === 0) assert.is(set.delete(id), model.delete(id));
    else {
      set.add(id);
      model.add(id);
    }
    assert.is(set.size, model.size);
    assert.is(set.has(id), model.has(id));
  }
  assert.equal(sorted(set), sorted(model));
});

/**
 * V8 rehashes a table whole when it fills, at each power of two. Ids come in sequence: were the
 * sixteen shards filled in step, they would all grow within the same few inserts, one batch of
 * creates rehashing every shard. Each shard must reach each size thousands of inserts apart.
 */
test('ids given in sequence fill one shard at a time: no two shards grow on nearby inserts', () => {
  const sizes = new Array<number>(16).fill(0);
  const reached = new Map<number, number[]>();
  for (let id = 1; id <= 600_000; id++) {
    const size = ++sizes[shardOf(id)];
    if (size >= 8192 && (size & (size - 1)) === 0) reached.set(size, [...(reached.get(size) ?? []), id]);
  }
  for (const [size, at] of reached) {
    assert.is(at.length, 16, `every shard reached ${size}`);
    const gaps = at.slice(1).map((id, i) => id - at[i]);
    assert.ok(Math.min(...gaps) >= 4096, `shards reached ${size} at ids ${at.join(', ')}`);
  }
  assert.ok(reached.has(32_768), 'sizes up to 32,768 per shard were checked');
});

test('ShardedWeakMap keys by the object, not its id: two versions of an entry are two keys', () => {
  const map = new ShardedWeakMap<{ id: number; version: number }, string>();
  const versions = Array.from({ length: 40 }, (_, i) => ({ id: i % 20, version: i < 20 ? 1 : 2 }));
  for (const entry of versions) map.set(entry, `${entry.id}@${entry.version}`);
  assert.equal(
    versions.map((entry) => map.get(entry)),
    versions.map((entry) => `${entry.id}@${entry.version}`),
  );
  assert.is(map.get({ id: 3, version: 1 }), undefined, 'an equal object is another key');
});

test.run();
