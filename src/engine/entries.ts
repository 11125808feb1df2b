import { hasUnsafeKey, type ObjectMaker, objectMaker, ownFields } from './codegen.js';
import type { EntryRecord } from './table.js';

/** The keys of parts of one shape, part by part, and a function that makes an object of such parts. */
interface Maker {
  keys: string[][];
  make: ObjectMaker;
}
/** One maker per shape of the parts: a few per resource; bounded. */
const makers: Maker[] = [];
const SHAPES_MAX = 256;

const sameKeys = (a: string[], b: string[]) => a.length === b.length && a.every((key, i) => key === b[i]);
const sameShape = (a: string[][], b: string[][]) => a.length === b.length && a.every((keys, i) => sameKeys(keys, b[i]));

/**
 * A new entry made of `parts`, in order (later ones win), as one compact object made by a literal
 * compiled once per shape of the parts (see objectMaker); the shape is found by comparing the parts'
 * keys with the known ones, not by a text made of them (bench/http.ts create, bench/replay.ts).
 */
export function entryOf(...parts: Record<string, unknown>[]): EntryRecord {
  const keys = parts.map((part) => Object.keys(part));
  let maker = makers.find((known) => sameShape(known.keys, keys));
  if (!maker) {
    // Past the bound, field by field: a new function for every call would cost far more.
    if (makers.length >= SHAPES_MAX) return ownFields(parts) as EntryRecord;
    maker = { keys, make: objectMaker(keys) };
    makers.push(maker);
  }
  return maker.make(parts) as EntryRecord;
}

/**
 * The entry after an update: a copy made by `entryOf` from the entry alone, so as compact as it is,
 * then the changes, the next version and the time set on it (`{ ...entry }` has no fast path past a
 * few fields: bench/http.ts patch).
 */
export function stamped(entry: EntryRecord, changes: Record<string, unknown>, at: string): EntryRecord {
  if (hasUnsafeKey(changes))
    return ownFields([entry, changes, { version: entry.version + 1, updated_at: at }]) as EntryRecord;
  const next = entryOf(entry) as Record<string, unknown>;
  for (const key in changes) next[key] = changes[key];
  next.version = entry.version + 1;
  next.updated_at = at;
  return next as EntryRecord;
}

const pickers = new WeakMap<readonly string[], ObjectMaker>();

/**
 * `{ id, ...fields }` with exactly `fieldNames` after the id, in that order, made by a literal
 * compiled once per list of names (the data of a creation event: bench/http.ts create).
 */
export function withId(
  id: number,
  fieldNames: readonly string[],
  fields: Record<string, unknown>,
): Record<string, unknown> {
  let make = pickers.get(fieldNames);
  if (!make) {
    make = objectMaker([['id'], fieldNames]);
    pickers.set(fieldNames, make);
  }
  return make([{ id }, fields]);
}
