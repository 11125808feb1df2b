import { Readable } from 'node:stream';
import type { ResourceName } from '../domain/resources.js';
import type { Collection, EntryRecord } from '../domain/shared/collection.js';
import { ShardedWeakMap } from '../domain/shared/sharded.js';
import { presentJson } from './present.js';

/**
 * Each entry's JSON, made once per version of the entry and shared by every request that shows it.
 * Entries are immutable (a change makes a new object), so the cache forgets old versions by itself.
 */
const serialised = new ShardedWeakMap<EntryRecord, string>();

/** An entry's JSON, from the cache or made; `keep: false` makes it without caching it. */
export function entryJson(resource: ResourceName, entry: EntryRecord, keep = true): string {
  let json = serialised.get(entry);
  if (json === undefined) {
    json = presentJson(resource, entry);
    if (keep) serialised.set(entry, json);
  }
  return json;
}

/** Entries per piece of a streamed list: a piece is made in well under a millisecond. */
const PIECE = 256;

/**
 * The body of a list, `{"items": [...], "total": n}`. A short one is one string; a long one is a
 * stream made piece by piece as the client reads it, so that a list of 100,000 entries neither
 * holds the event loop while it is serialised nor sits in memory whole, once per request.
 */
export function listBody(
  resource: ResourceName,
  entries: EntryRecord[],
  total: number,
  extra: Record<string, unknown> = {},
): string | Readable {
  if (entries.length <= PIECE) return [...pieces(resource, entries, total, extra)].join('');
  return Readable.from(pieces(resource, entries, total, extra), { objectMode: false });
}

function* pieces(resource: ResourceName, entries: EntryRecord[], total: number, extra: Record<string, unknown>) {
  const tail = Object.keys(extra).length > 0 ? `,${JSON.stringify(extra).slice(1, -1)}` : '';
  yield '{"items":[';
  for (let from = 0; from < entries.length; from += PIECE) {
    const items = entries.slice(from, from + PIECE).map((entry) => entryJson(resource, entry));
    yield (from > 0 ? ',' : '') + items.join(',');
  }
  yield `],"total":${total}${tail}}`;
}

/** A ready list: the collection's change count it was made at, and its bytes. */
const ready = new WeakMap<Collection, { count: number; body: Buffer }>();
/** The change count a ready list is being made at, by the request that streams it first. */
const building = new WeakMap<Collection, number>();

/**
 * The plain list of a resource (no filter, no page, no `at`): made once per change of the
 * collection and then sent as it is by every request. The first request after a change streams it
 * piece by piece (nothing holds the event loop) and keeps the pieces for the next ones.
 */
export function plainList(resource: ResourceName, collection: Collection): Buffer | Readable {
  const count = collection.changeCount;
  const kept = ready.get(collection);
  if (kept?.count === count) return kept.body;
  const entries = collection.inOrder();
  // One request keeps what it sends; others arriving meanwhile only stream (memory stays bounded).
  const keep = building.get(collection) !== count;
  if (keep) building.set(collection, count);
  const made: Buffer[] = [];
  function* keeping() {
    for (const piece of pieces(resource, entries, entries.length, {})) {
      const bytes = Buffer.from(piece);
      if (keep) made.push(bytes);
      yield bytes;
    }
    if (keep) ready.set(collection, { count, body: Buffer.concat(made) });
  }
  if (entries.length <= PIECE) {
    for (const _ of keeping());
    return ready.get(collection)!.body;
  }
  return Readable.from(keeping(), { objectMode: false });
}
