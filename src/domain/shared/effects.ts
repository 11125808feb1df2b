import type { CollectionName } from '../resources.js';
import type { ConfigState } from '../state.js';
import type { Collection, EntryRecord, Journal } from './collection.js';
import type { LoggedEvent } from './types.js';

/** One entry changed by an event: the event's own entry first, then the entries it changed in passing. */
export interface Effect {
  resource: CollectionName;
  id: number;
  /** The entry's revision in its own stream for this event (0 for its creation). */
  revision: number;
  /** Undefined before its creation (or while hard-deleted). */
  before?: EntryRecord;
  /** Undefined after a hard delete. */
  after?: EntryRecord;
}

/** How an event type changes the state. */
export type Apply = (state: ConfigState, event: LoggedEvent, journal?: Journal) => Effect[];

export class FoldError extends Error {
  override name = 'FoldError';
}

export const idOf = (event: LoggedEvent) => event.data.id as number;

/** The entry's next revision in its own stream: its version, or one past the delete that buried it. */
export function nextRevision(col: Collection, id: number): number {
  const entry = col.get(id);
  if (entry) return entry.version;
  const tombstone = col.tombstone(id);
  return tombstone ? tombstone.version + 1 : 0;
}

export function existing(col: Collection, event: LoggedEvent): EntryRecord {
  const entry = col.get(idOf(event));
  if (!entry)
    throw new FoldError(`${event.type} for ${col.resource.name}/${idOf(event)}, which the state does not hold`);
  return entry;
}

/** Sets one entry and reports it as an effect. */
export function change(
  col: Collection,
  id: number,
  after: EntryRecord | undefined,
  journal: Journal | undefined,
): Effect {
  const effect: Effect = {
    resource: col.resource.name as CollectionName,
    id,
    revision: nextRevision(col, id),
    before: col.get(id),
    after,
  };
  col.put(id, after, journal);
  return effect;
}

type Make = (parts: Record<string, unknown>[]) => EntryRecord;
/** The keys of parts of one shape, part by part, and a function that makes an entry of such parts. */
interface Maker {
  keys: string[][];
  make: Make;
}
/** One maker per shape of the parts: a few per resource; bounded. */
const makers: Maker[] = [];
const SHAPES_MAX = 256;

const sameKeys = (a: string[], b: string[]) => a.length === b.length && a.every((key, i) => key === b[i]);
const sameShape = (a: string[][], b: string[][]) => a.length === b.length && a.every((keys, i) => sameKeys(keys, b[i]));

/**
 * In an object literal, `"__proto__": value` sets the prototype instead of making a field: an entry
 * with such a key (only a log written by other means could hold one) is made field by field, as is
 * one of a shape past the bound.
 */
const PROTO = '__proto__';
const ownFields: Make = (parts) => {
  const entry = {};
  for (const part of parts)
    for (const key of Object.keys(part))
      Object.defineProperty(entry, key, { value: part[key], enumerable: true, writable: true, configurable: true });
  return entry as EntryRecord;
};

/** A function that makes an entry of parts with these keys: one object literal (see `entryOf`). */
function compileMake(keys: string[][]): Make {
  // Each key once, where it first appears; its value from the last part that has it.
  const from = new Map<string, number>();
  keys.forEach((partKeys, i) => {
    for (const key of partKeys) from.set(key, i);
  });
  if (from.has(PROTO)) return ownFields;
  const fields = [...from].map(([key, i]) => `${JSON.stringify(key)}: parts[${i}][${JSON.stringify(key)}]`);
  return new Function('parts', `return { ${fields.join(', ')} };`) as Make;
}

/**
 * A new entry made of `parts`, in order (later ones win), as one compact object. V8 gives an object
 * made by spreading a large one and then adding fields a hidden class of its own and a property
 * array several times its size (about 1 KB per entry, 100 MiB at 100,000 servers); so the entry is
 * made by one object literal naming every key, compiled once per shape of the parts (as ajv
 * compiles a schema): its fields are laid out inside the object and entries of a shape share one
 * class. The shape is found by comparing the parts' keys with the known ones, not by a text made of
 * them (which cost a server's creation about 1 us).
 */
export function entryOf(...parts: Record<string, unknown>[]): EntryRecord {
  const keys = parts.map((part) => Object.keys(part));
  let maker = makers.find((known) => sameShape(known.keys, keys));
  if (!maker) {
    // Past the bound, field by field: a new function for every call would cost far more.
    if (makers.length >= SHAPES_MAX) return ownFields(parts);
    maker = { keys, make: compileMake(keys) };
    makers.push(maker);
  }
  return maker.make(parts);
}

/**
 * The entry after an update: a copy of it, so compact as it is (`changes` adds no field to it), made
 * by `entryOf` from the entry alone. V8 copies a 25-field object literal in about 40 ns, where
 * `{ ...entry }` takes about 450 ns (it has no fast path past a few fields); an update of a server
 * as a whole (keys compared, copy, changes set) takes about 100 ns against 515. A PATCH copies its
 * entry three times (decided, decided again behind a flushing batch, folded), a replay once per event.
 */
export function stamped(entry: EntryRecord, changes: Record<string, unknown>, at: string): EntryRecord {
  if (Object.hasOwn(changes, PROTO)) return ownFields([entry, changes, { version: entry.version + 1, updated_at: at }]);
  const next = entryOf(entry) as Record<string, unknown>;
  for (const key in changes) next[key] = changes[key];
  next.version = entry.version + 1;
  next.updated_at = at;
  return next as EntryRecord;
}
