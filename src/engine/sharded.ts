/**
 * A Map or Set that splits itself in SHARDS by key once it holds SPLIT_AT entries. V8 grows a hash
 * table by rehashing it whole inside the insert that fills it; split sixteen ways, each growth moves
 * a sixteenth of the entries, on inserts far apart, so no single write holds the event loop
 * (bench/http.ts, largest event-loop delay at 100,000 servers). Small tables stay one Map.
 * Iteration goes shard by shard: callers that need an order sort.
 */
const SHARDS = 16;
const SPLIT_AT = 8192;
/**
 * Numbers go to their shard in runs of 2^RUN_BITS: ids are given in sequence, and by their low bits
 * the sixteen shards would fill in step and grow within the same sixteen inserts. In runs, each
 * shard reaches a size 4,096 inserts after the one before it (counted from id 1, the first id given).
 */
const RUN_BITS = 12;

/** Which shard holds `key`: a number by its run, a string by a hash of all its characters. */
export function shardOf(key: number | string): number {
  if (typeof key === 'number') return ((key - 1) >>> RUN_BITS) & (SHARDS - 1);
  let hash = 0;
  for (let i = 0; i < key.length; i++) hash = (hash * 31 + key.charCodeAt(i)) | 0;
  return hash & (SHARDS - 1);
}

export class ShardedMap<K extends number | string, V> {
  /** The one table, until it is split. */
  private whole?: Map<K, V> = new Map();
  private shards: Map<K, V>[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: K): V | undefined {
    return this.table(key).get(key);
  }

  has(key: K): boolean {
    return this.table(key).has(key);
  }

  set(key: K, value: V): this {
    const table = this.table(key);
    const before = table.size;
    table.set(key, value);
    this.count += table.size - before;
    if (this.whole && this.count >= SPLIT_AT) this.split(this.whole);
    return this;
  }

  delete(key: K): boolean {
    const deleted = this.table(key).delete(key);
    if (deleted) this.count -= 1;
    return deleted;
  }

  *keys(): IterableIterator<K> {
    for (const table of this.tables()) yield* table.keys();
  }

  *values(): IterableIterator<V> {
    for (const table of this.tables()) yield* table.values();
  }

  private table(key: K): Map<K, V> {
    return this.whole ?? this.shards[shardOf(key)];
  }

  private tables(): Map<K, V>[] {
    return this.whole ? [this.whole] : this.shards;
  }

  private split(whole: Map<K, V>): void {
    this.shards = Array.from({ length: SHARDS }, () => new Map<K, V>());
    for (const [key, value] of whole) this.shards[shardOf(key)].set(key, value);
    this.whole = undefined;
  }
}

/**
 * A WeakMap keyed by entries, split by their id in SHARDS from the start (it cannot count its keys),
 * for the same reason as ShardedMap (bench/http.ts, largest event-loop delay over the lists).
 */
export class ShardedWeakMap<K extends { id: number }, V> {
  private readonly shards = Array.from({ length: SHARDS }, () => new WeakMap<K, V>());

  get(key: K): V | undefined {
    return this.shards[shardOf(key.id)].get(key);
  }

  set(key: K, value: V): this {
    this.shards[shardOf(key.id)].set(key, value);
    return this;
  }
}

/** A set of ids, split as ShardedMap is. */
export class ShardedSet implements Iterable<number> {
  private readonly ids = new ShardedMap<number, true>();

  constructor(ids: Iterable<number> = []) {
    for (const id of ids) this.add(id);
  }

  get size(): number {
    return this.ids.size;
  }

  has(id: number): boolean {
    return this.ids.has(id);
  }

  add(id: number): this {
    this.ids.set(id, true);
    return this;
  }

  delete(id: number): boolean {
    return this.ids.delete(id);
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this.ids.keys();
  }
}
