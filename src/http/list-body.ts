import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ResourceName } from '../domain/resources.js';
import type { Collection } from '../domain/state.js';
import { ShardedWeakMap } from '../engine/sharded.js';
import type { EntryRecord } from '../engine/table.js';
import { pacedBody } from './paced.js';
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
    if (keep) serialised.set(entry, flattened(json));
  }
  return json;
}

/**
 * `text` as one run of characters: the JSON of an entry is made by joining its fields, which V8 keeps
 * as a tree of the pieces, and every answer would copy the cached tree into one run again
 * (bench/http.ts read-one). A string that `JSON.parse` makes is one run, and the round trip gives
 * back every string exactly (a lone surrogate too, escaped, then read back).
 */
function flattened(text: string): string {
  return JSON.parse(JSON.stringify(text));
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
  entries: readonly EntryRecord[],
  total: number,
  extra: Record<string, unknown> = {},
): string | Readable {
  if (entries.length <= PIECE) return [...pieces(resource, entries, total, extra)].join('');
  return pacedBody(pieces(resource, entries, total, extra));
}

function* pieces(
  resource: ResourceName,
  entries: readonly EntryRecord[],
  total: number,
  extra: Record<string, unknown>,
) {
  const more = Object.keys(extra).length > 0 ? `,${JSON.stringify(extra).slice(1, -1)}` : '';
  yield LIST_HEAD;
  for (let from = 0; from < entries.length; from += PIECE) yield itemsPiece(resource, entries, from, true);
  yield listTail(total, more);
}

/** What comes before a list's items, and after them: `{"items":[` … `],"total":n}` (with more members). */
const LIST_HEAD = '{"items":[';
const listTail = (total: number, more = '') => `],"total":${total}${more}}`;

/** The entries of one piece as JSON, after a comma unless it is the first. */
function itemsPiece(resource: ResourceName, entries: readonly EntryRecord[], from: number, keep: boolean): string {
  const items = entries.slice(from, from + PIECE).map((entry) => entryJson(resource, entry, keep));
  return (from > 0 ? ',' : '') + items.join(',');
}

/**
 * A ready list: the collection's change count it was made at, the entries it shows, the bytes of
 * their pieces as they were sent (`{"items":[` and the total around them), and once joined, all
 * of it in one buffer (the pieces are then views of it).
 */
interface ReadyList {
  count: number;
  entries: readonly EntryRecord[];
  pieces: Buffer[];
  whole?: Buffer;
}
const ready = new WeakMap<Collection, ReadyList>();
/** The list being made at the collection's latest change count, shared by every request that asks for it then. */
const building = new WeakMap<Collection, ReadyList>();

/** A list's body and, when known before it is sent, its length in bytes. */
export interface ListAnswer {
  body: Buffer | Readable;
  length?: number;
}

/**
 * The plain list of a resource (no filter, no page, no `at`): made once per change of the
 * collection and then sent as it is by every request. The first requests after a change stream it
 * a piece per turn of the event loop, each piece made by the first of them to need it and taken by
 * the others. A piece whose entries are those of the ready list before is taken from it as it is:
 * after a PATCH, one piece of a list is made again, not all of them. The entries' JSON is not kept
 * for each entry, which would load the collector (bench/http.ts, lists at 100,000 servers).
 */
export function plainList(resource: ResourceName, collection: Collection): ListAnswer {
  const count = collection.changeCount;
  const before = ready.get(collection);
  if (before?.count === count) return readyAnswer(before);
  let list = building.get(collection);
  if (list?.count !== count) {
    list = { count, entries: collection.inOrder(), pieces: [] };
    building.set(collection, list);
  }
  const made = list;
  const { entries, pieces } = made;
  const piece = (index: number) => {
    const from = index * PIECE;
    pieces[index] ??=
      before && samePiece(before.entries, entries, from)
        ? before.pieces[index]
        : Buffer.from(itemsPiece(resource, entries, from, false));
    return pieces[index];
  };
  if (entries.length <= PIECE) {
    if (entries.length > 0) piece(0);
    made.whole = Buffer.concat(listAround(made));
    ready.set(collection, made);
    return { body: made.whole };
  }
  function* making() {
    yield HEAD_BYTES;
    for (let index = 0; index * PIECE < entries.length; index++) yield piece(index);
    yield Buffer.from(listTail(entries.length));
    // The first request through keeps the list, unless a later change started another one.
    if (building.get(collection) !== made || ready.get(collection) === made) return;
    ready.set(collection, made);
    join(made).catch(() => {}); // a list not joined is sent in its pieces
  }
  return { body: pacedBody(making()) };
}

/**
 * Copies a ready list's pieces into one buffer, a piece per turn of the event loop, then makes the
 * pieces views of it: no bytes kept twice. Sent whole, a list goes out from the socket's own queue
 * instead of a piece per turn, each waiting for the one before to drain (bench/http.ts list).
 */
async function join(list: ReadyList): Promise<void> {
  const buffers = listAround(list);
  const whole = Buffer.allocUnsafe(lengthOf(buffers));
  const views: Buffer[] = [];
  for (let i = 0, offset = 0; i < buffers.length; offset += buffers[i].length, i++) {
    if (i > 0) await nextTurn();
    buffers[i].copy(whole, offset);
    views.push(whole.subarray(offset, offset + buffers[i].length));
  }
  list.pieces = views.slice(1, -1);
  list.whole = whole;
}

const HEAD_BYTES = Buffer.from(LIST_HEAD);
const listAround = ({ entries, pieces }: ReadyList) => [HEAD_BYTES, ...pieces, Buffer.from(listTail(entries.length))];
const lengthOf = (buffers: Buffer[]) => buffers.reduce((sum, buffer) => sum + buffer.length, 0);

/** Whether the piece starting at `from` holds the same entries (the same versions) in both lists. */
function samePiece(was: readonly EntryRecord[], is: readonly EntryRecord[], from: number): boolean {
  const end = Math.min(is.length, from + PIECE);
  if (Math.min(was.length, from + PIECE) !== end) return false;
  for (let i = from; i < end; i++) if (was[i] !== is[i]) return false;
  return true;
}

/** A ready list as sent: whole once joined; until then its pieces, one per turn, with the length known. */
function readyAnswer(list: ReadyList): ListAnswer {
  if (list.whole) return { body: list.whole };
  const buffers = listAround(list);
  return { body: pacedBody(buffers), length: lengthOf(buffers) };
}
