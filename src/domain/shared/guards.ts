import { Conflict, Deleted, fieldError, NotFound, PreconditionFailed } from './errors.js';
import { type Collection, type EntryMeta, MAX_ID, type Resource } from './types.js';

/** `If-Match` as RFC 9110 reads it: `*`, or a list of (possibly weak) entity tags. */
export function ifMatchAccepts(header: string, version: number): boolean {
  const tags = header.split(',').map((t) => t.trim().replace(/^W\//, ''));
  return tags.some((t) => t === '*' || t === `"${version}"`);
}

/** The entry a write applies to: it must exist, not be hard-deleted, and match `If-Match`. */
export function loadForWrite<E extends EntryMeta>(
  resource: Resource,
  col: Collection<E>,
  id: number,
  ifMatch?: string,
): E {
  const entry = col.entries.get(id);
  if (!entry) throw col.deleted.has(id) ? new Deleted(resource, id) : new NotFound(resource, id);
  if (ifMatch !== undefined && !ifMatchAccepts(ifMatch, entry.version))
    throw new PreconditionFailed(ifMatch, entry.version);
  return entry;
}

/** Ids are never reused: an explicit id must never have been taken, else the next one above all used ids. */
export function allocateId(resource: Resource, col: Collection<EntryMeta>, requested?: number): number {
  if (requested === undefined) {
    // Never past the largest id a client can address: the id space ends there, and no id is reused.
    if (col.lastId >= MAX_ID) {
      throw new Conflict(
        `the ids of ${resource} are exhausted: ${MAX_ID} is taken and ids are never reused; create with an explicit id that was never used`,
      );
    }
    return col.lastId + 1;
  }
  if (col.entries.has(requested) || col.deleted.has(requested))
    throw new Conflict(`${resource} id ${requested} is already used`);
  return requested;
}

/** Refuses a value that another entry of the collection already has. */
export function assertUnique<E extends EntryMeta>(
  col: Collection<E>,
  selfId: number,
  same: (other: E) => boolean,
  describe: string,
): void {
  for (const other of col.entries.values()) {
    if (other.id !== selfId && same(other)) throw new Conflict(`${describe} is already used by id ${other.id}`);
  }
}

export const sameText = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A reference must point to an entry that exists (and, when asked, passes `usable`). */
export function assertReference<E extends EntryMeta>(
  field: string,
  col: Collection<E>,
  id: number | null,
  target: string,
  usable: (e: E) => boolean = () => true,
): void {
  if (id === null) return;
  const entry = col.entries.get(id);
  if (!entry) throw fieldError(field, 'unknown_reference', `${target} ${id} does not exist`);
  if (!usable(entry)) throw fieldError(field, 'unusable_reference', `${target} ${id} is deleted`);
}
