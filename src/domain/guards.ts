import type { EntryRecord } from '../engine/table.js';
import { collectionOf, type ResourceName } from './resources.js';
import type { Link, Resource } from './shared/declaration.js';
import { Conflict, Deleted, type FieldError, NotFound, PreconditionFailed } from './shared/errors.js';
import { type ExpectedVersion, MAX_ID } from './shared/types.js';
import type { Collection, ConfigState } from './state.js';

/** The entry a write applies to: it must exist, not be hard-deleted, and be at an expected version. */
export function loadForWrite(col: Collection, id: number, expected?: ExpectedVersion): EntryRecord {
  const entry = col.get(id);
  if (!entry) throw col.tombstone(id) ? new Deleted(col.spec.name, id) : new NotFound(col.spec.name, id);
  checkExpected(expected, entry.version);
  return entry;
}

export function checkExpected(expected: ExpectedVersion | undefined, version: number | undefined): void {
  if (expected === undefined || expected === 'any') return;
  if (version === undefined || !expected.includes(version)) throw new PreconditionFailed(expected, version ?? 0);
}

/**
 * Ids are never reused: an explicit id must never have been taken, else the next one above all used
 * ids, and at least `floor` (where another system that keeps the same rows allocates its own).
 */
export function allocateId(col: Collection, requested?: number, floor = 1): number {
  const resource = col.spec.name;
  if (requested !== undefined) {
    if (col.get(requested) || col.tombstone(requested))
      throw new Conflict(`${resource} id ${requested} is already used`, { resource, id: requested, fields: ['id'] });
    return requested;
  }
  // Never past the largest id a client can address: the id space ends there, and no id is reused.
  if (col.lastId >= MAX_ID) {
    throw new Conflict(
      `the ids of ${resource} are exhausted: ${MAX_ID} is taken and ids are never reused; ` +
        'create with an explicit id that was never used',
    );
  }
  return Math.max(col.lastId + 1, Math.min(floor, MAX_ID));
}

/** Refuses a unique value that another entry holds; only keys made of `changed` fields are looked at. */
export function checkUnique(col: Collection, next: Record<string, unknown>, id: number, changed: Set<string>): void {
  const taken = col.conflict(next, id, (key) => key.fields.some((field) => changed.has(field)));
  if (!taken) return;
  const holder = { resource: col.spec.name, id: taken.id, fields: [...taken.key.fields] };
  throw new Conflict(`${taken.key.describe(next)} is already used by id ${taken.id}`, holder);
}

/**
 * The problems with the ids `fields` picks among `next`'s references: unknown or unusable targets.
 * `reportAs` names another field for them (a restore reports on `is_deleted`).
 */
export function referenceErrors(
  state: ConfigState,
  resource: Resource,
  fields: (link: Link) => unknown[],
  reportAs?: string,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const link of resource.references) {
    const target = state.collections[link.reference.target as ResourceName];
    for (const id of fields(link)) {
      const entry = target.get(id as number);
      const field = reportAs ?? link.field;
      const name = collectionOf(link.reference.target).declaration.title.toLowerCase();
      const missing = reportAs ? 'no longer exists' : 'does not exist';
      if (!entry) errors.push({ field, code: 'unknown_reference', message: `${name} ${id} ${missing}` });
      else if (link.reference.unusable?.when(entry)) {
        errors.push({ field, code: 'unusable_reference', message: `${name} ${id} ${link.reference.unusable.why}` });
      }
    }
  }
  return errors;
}

/** The ids a reference field holds (none for null). */
export const heldIds = (value: unknown): unknown[] => (Array.isArray(value) ? value : value == null ? [] : [value]);

/** The ids a field references in `next` that `before` did not. */
export function addedIds(link: Link, next: Record<string, unknown>, before?: Record<string, unknown>): unknown[] {
  const old = new Set(heldIds(before?.[link.field]));
  return heldIds(next[link.field]).filter((id) => !old.has(id));
}
