import { Readable } from 'node:stream';
import type { ResourceName } from '../domain/resources.js';
import type { EntryRecord } from '../domain/shared/collection.js';
import { present } from './present.js';

/**
 * Each entry's JSON, made once per version of the entry and shared by every request that shows it.
 * Entries are immutable (a change makes a new object), so the cache forgets old versions by itself.
 */
const serialised = new WeakMap<EntryRecord, string>();

export function entryJson(resource: ResourceName, entry: EntryRecord): string {
  let json = serialised.get(entry);
  if (json === undefined) {
    json = JSON.stringify(present(resource, entry));
    serialised.set(entry, json);
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
  const tail = Object.keys(extra).length > 0 ? `,${JSON.stringify(extra).slice(1, -1)}` : '';
  const items = (from: number, to: number) =>
    entries
      .slice(from, to)
      .map((entry) => entryJson(resource, entry))
      .join(',');
  if (entries.length <= PIECE) return `{"items":[${items(0, entries.length)}],"total":${total}${tail}}`;
  function* pieces() {
    yield '{"items":[';
    for (let from = 0; from < entries.length; from += PIECE) yield (from > 0 ? ',' : '') + items(from, from + PIECE);
    yield `],"total":${total}${tail}}`;
  }
  return Readable.from(pieces(), { objectMode: false });
}
