import type { Journal } from './journal.js';
import { ShardedMap, ShardedSet } from './sharded.js';
import { type KeySpec, UniqueIndex } from './unique-index.js';

/** What every stored entry has, whatever its table. */
export interface EntryMeta {
  id: number;
  version: number;
  created_at: string;
  updated_at: string;
}

export type EntryRecord = EntryMeta & Record<string, unknown>;

/** What is left of a hard-deleted entry: enough to bring it back with its id and count its versions on. */
export interface Tombstone {
  /** The version the entry had when it was deleted. */
  version: number;
  created_at: string;
}

/** What a table must index: its name (for messages), its unique keys, and the fields holding ids of other entries. */
export interface TableSpec<K extends KeySpec = KeySpec> {
  name: string;
  unique: readonly K[];
  referenceFields: readonly string[];
}

/**
 * One table's entries, with the indexes its spec asks for (unique values, who references whom) kept
 * up to date by `put`, the only way to change it. Entries are never mutated: `put` replaces them.
 */
export class Table<E extends EntryRecord = EntryRecord, K extends KeySpec = KeySpec> {
  private readonly byId = new ShardedMap<number, E>();
  private readonly tombstones = new Map<number, Tombstone>();
  private highest = 0;
  private readonly uniques: UniqueIndex<K>[];
  /** Field → referenced id → ids of the entries that reference it. */
  private readonly referrers = new Map<string, Map<number, ShardedSet>>();
  /**
   * The entries in ascending id order, kept as they change so that a list needs no sort
   * (bench/http.ts list). Shared with the callers of `inOrder` until the next change, which copies
   * it first (`owned`); a change it cannot follow cheaply marks it stale (`sorted`), and the next
   * `inOrder` sorts it again.
   */
  private order: E[] = [];
  private sorted = true;
  private owned = true;
  /** Entries put in or taken out in the middle of `order` since it was sorted: each one moves the entries after it. */
  private moves = 0;
  private changes = 0;

  constructor(readonly spec: TableSpec<K>) {
    this.uniques = spec.unique.map((key) => new UniqueIndex(key, (id) => this.byId.get(id)));
    for (const field of spec.referenceFields) this.referrers.set(field, new Map());
  }

  get(id: number): E | undefined {
    return this.byId.get(id);
  }

  tombstone(id: number): Tombstone | undefined {
    return this.tombstones.get(id);
  }

  /** The highest id ever used; allocation continues above it. */
  get lastId(): number {
    return this.highest;
  }

  get size(): number {
    return this.byId.size;
  }

  /** Grows with every change (undone ones included): what was made from the entries at one count still holds. */
  get changeCount(): number {
    return this.changes;
  }

  values(): IterableIterator<E> {
    return this.byId.values();
  }

  deletedIds(): IterableIterator<[number, Tombstone]> {
    return this.tombstones.entries();
  }

  /** Entries in ascending id order, without a sort per call; the same array until the next change. */
  inOrder(): readonly E[] {
    if (!this.sorted) {
      this.order = [...this.byId.values()].sort((a, b) => a.id - b.id);
      this.sorted = true;
      this.moves = 0;
    }
    this.owned = false;
    return this.order;
  }

  /** The id of another entry that already has one of `candidate`'s unique values, with the key. */
  conflict(
    candidate: Record<string, unknown>,
    self: number,
    only: (key: K) => boolean = () => true,
  ): { id: number; key: K } | undefined {
    for (const index of this.uniques) {
      if (!only(index.key)) continue;
      const id = index.holder(candidate, self);
      if (id !== undefined) return { id, key: index.key };
    }
    return undefined;
  }

  /** The ids of the entries whose `field` references `target`. */
  referencing(field: string, target: number): Iterable<number> & { readonly size: number } {
    return this.referrers.get(field)?.get(target) ?? EMPTY;
  }

  /** Sets the entry (undefined: hard-deleted, leaving a tombstone); `journal` records how to undo it. */
  put(id: number, entry: E | undefined, journal?: Journal): void {
    const before = this.byId.get(id);
    const buried = this.tombstones.get(id);
    const highest = this.highest;
    this.changes += 1;
    if (journal) journal.record(() => this.restore(id, before, buried, highest));
    if (before && entry) this.reindex(id, before, entry);
    else if (before) this.unindex(id, before);
    if (entry) {
      this.byId.set(id, entry);
      this.tombstones.delete(id);
      if (!before) this.index(id, entry);
    } else if (before) {
      this.byId.delete(id);
      this.tombstones.set(id, { version: before.version, created_at: before.created_at });
    }
    this.reorder(id, before, entry);
    if (id > this.highest) this.highest = id;
  }

  /** Loads a tombstone as stored (start-up). */
  bury(id: number, tombstone: Tombstone): void {
    this.tombstones.set(id, tombstone);
    if (id > this.highest) this.highest = id;
  }

  /** Loads the highest id as stored (start-up). */
  raiseLastId(id: number): void {
    if (id > this.highest) this.highest = id;
  }

  private restore(id: number, entry: E | undefined, tombstone: Tombstone | undefined, highest: number): void {
    const now = this.byId.get(id);
    this.changes += 1;
    if (now && entry) this.reindex(id, now, entry);
    else if (now) this.unindex(id, now);
    else if (entry) this.index(id, entry);
    if (entry) this.byId.set(id, entry);
    else this.byId.delete(id);
    if (tombstone) this.tombstones.set(id, tombstone);
    else this.tombstones.delete(id);
    this.reorder(id, now, entry);
    this.highest = highest;
  }

  /**
   * Follows one entry's change in `order`: replaced in place, added at the end or taken from it at
   * once (a write, and the undoing of a tentative creation); put in or taken out in the middle by
   * moving the entries after it, MAX_MOVES times at most before the next sort (a hard delete, a
   * restore; not a whole import in random id order, which then sorts once instead).
   */
  private reorder(id: number, before: E | undefined, entry: E | undefined): void {
    if (!this.sorted || (!before && !entry)) return;
    if (!this.owned) {
      this.order = this.order.slice();
      this.owned = true;
    }
    const order = this.order;
    const last = order.length - 1;
    if (!before) {
      if (last < 0 || order[last].id < id) order.push(entry!);
      else this.move(positionOf(order, id), 0, entry!);
    } else if (entry) order[positionOf(order, id)] = entry;
    else if (order[last].id === id) order.pop();
    else this.move(positionOf(order, id), 1);
  }

  private move(at: number, remove: 0 | 1, entry?: E): void {
    if (++this.moves > MAX_MOVES) {
      this.sorted = false;
      return;
    }
    if (entry) this.order.splice(at, remove, entry);
    else this.order.splice(at, remove);
  }

  private index(id: number, entry: E): void {
    for (const index of this.uniques) index.add(id, entry);
    for (const [field, byTarget] of this.referrers) refer(byTarget, id, entry[field]);
  }

  private unindex(id: number, entry: E): void {
    for (const index of this.uniques) index.remove(id, entry);
    for (const [field, byTarget] of this.referrers) unrefer(byTarget, id, entry[field]);
  }

  /**
   * An entry replaced: only the unique keys and references whose values changed are moved (a PATCH
   * of a server's port leaves its name, client, environment and tags where they were). Values are
   * compared with ===: entries are never mutated, so an unchanged array is the same array.
   */
  private reindex(id: number, before: E, entry: E): void {
    for (const index of this.uniques) {
      if (!index.moves(before, entry)) continue;
      index.remove(id, before);
      index.add(id, entry);
    }
    for (const [field, byTarget] of this.referrers) {
      if (before[field] === entry[field]) continue;
      unrefer(byTarget, id, before[field]);
      refer(byTarget, id, entry[field]);
    }
  }
}

function refer(byTarget: Map<number, ShardedSet>, id: number, value: unknown): void {
  for (const target of targetsOf(value)) {
    const ids = byTarget.get(target);
    if (ids) ids.add(id);
    else byTarget.set(target, new ShardedSet([id]));
  }
}

function unrefer(byTarget: Map<number, ShardedSet>, id: number, value: unknown): void {
  for (const target of targetsOf(value)) {
    const ids = byTarget.get(target);
    ids?.delete(id);
    if (ids?.size === 0) byTarget.delete(target);
  }
}

const EMPTY = new ShardedSet();

/** Entries put in or taken out of the middle of a collection's order before it is sorted again instead. */
const MAX_MOVES = 64;

/**
 * Where the entry with `id` is, or would go, in entries sorted by id. Ids are distinct integers, so
 * it is at most `id - first` places from the start and at least `last - id` places from the end:
 * where no id was skipped those meet and no entry is read, otherwise a bisection between the two
 * (bench/http.ts patch at 100,000 servers).
 */
function positionOf(order: readonly EntryRecord[], id: number): number {
  const length = order.length;
  if (length === 0) return 0;
  const clamp = (at: number) => Math.min(length, Math.max(0, at));
  let low = clamp(length - 1 - (order[length - 1].id - id));
  let high = clamp(id - order[0].id);
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (order[middle].id < id) low = middle + 1;
    else high = middle;
  }
  return low;
}

const targetsOf = (value: unknown): number[] =>
  Array.isArray(value) ? (value as number[]) : typeof value === 'number' ? [value] : [];
