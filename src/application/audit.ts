import { type ChangeItem, type DiffMember, redactDiff } from '../../projections/changes.js';
import { RESOURCE_NAMES, type ResourceName, resourceOf } from '../domain/resources.js';
import type { EntryRecord } from '../domain/shared/collection.js';
import { Deleted, NotFound } from '../domain/shared/errors.js';
import type { ConfigState } from '../domain/state.js';
import type { AuditReader, ChangeQuery, EntryThen } from '../read-models/port.js';

/** A moment of the log: a position, or a time (ISO 8601, UTC). */
export type Moment = { position: number } | { time: string };

/** The position a time-travel answer is given as of, and when that event happened. */
export interface AsOf {
  position: number;
  /** Null for position 0: before the first event. */
  at: string | null;
}

export interface ResourceDiff {
  created: EntryRecord[];
  updated: { id: number; diff: DiffMember[] }[];
  deleted: number[];
}

export interface DiffReport {
  from: AsOf;
  to: AsOf;
  resources: Record<ResourceName, ResourceDiff>;
}

/** Above this many entries of one resource changed between two moments, whole lists are compared. */
const WHOLE_LIST = 200;

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The auditor's questions: the change log, the configuration as it was at a moment, and what changed
 * between two moments. Everything comes from what the projector stored as it folded each event;
 * nothing rescans the log.
 */
export class Audit {
  constructor(
    private readonly reader: AuditReader,
    private readonly current: () => ConfigState,
  ) {}

  private get head(): number {
    return this.current().revision + 1;
  }

  /** The position a moment stands for: a position past the last event, or a later time, is the head. */
  resolve(moment: Moment): AsOf {
    const position = 'position' in moment ? Math.min(moment.position, this.head) : this.reader.positionAt(moment.time);
    const at = position === 0 ? null : (this.reader.timeOf(position) ?? null);
    return { position, at };
  }

  changes(query: ChangeQuery): Iterable<ChangeItem> {
    return this.reader.changes(query);
  }

  /** One entry as it was; 404 `not_found` if it did not exist yet, `deleted` if it was hard-deleted then. */
  entryAt(resource: ResourceName, id: number, moment: Moment): { entry: EntryRecord; asOf: AsOf } {
    const asOf = this.resolve(moment);
    const then = this.entryThen(resource, id, asOf.position);
    if (!then) throw new NotFound(resource, id);
    if ('deleted' in then) throw new Deleted(resource, id);
    return { entry: then.entry, asOf };
  }

  /** Every entry of a resource as it was (soft-deleted ones included), in id order. */
  listAt(resource: ResourceName, moment: Moment): { entries: readonly EntryRecord[]; asOf: AsOf } {
    const asOf = this.resolve(moment);
    const entries =
      asOf.position === this.head
        ? this.current().collections[resource].inOrder()
        : this.reader.listAt(resource, asOf.position);
    return { entries, asOf };
  }

  private entryThen(resource: ResourceName, id: number, position: number): EntryThen {
    if (position !== this.head) return this.reader.entryAt(resource, id, position);
    const col = this.current().collections[resource];
    const entry = col.get(id);
    return entry ? { entry } : col.tombstone(id) ? { deleted: true } : undefined;
  }

  /** The net change between two moments, per resource: an entry changed and changed back is not listed. */
  diff(from: Moment, to: Moment): DiffReport {
    const [start, end] = [this.resolve(from), this.resolve(to)];
    const touched = new Map<ResourceName, number[]>();
    if (end.position > start.position) {
      for (const { resource, id } of this.reader.touched(start.position, end.position)) {
        touched.set(resource, [...(touched.get(resource) ?? []), id]);
      }
    }
    const resources = Object.fromEntries(
      RESOURCE_NAMES.map((name) => [name, this.resourceDiff(name, touched.get(name) ?? [], start, end)]),
    ) as Record<ResourceName, ResourceDiff>;
    return { from: start, to: end, resources };
  }

  private resourceDiff(resource: ResourceName, ids: number[], start: AsOf, end: AsOf): ResourceDiff {
    const result: ResourceDiff = { created: [], updated: [], deleted: [] };
    const [before, after] = [this.entriesAt(resource, ids, start), this.entriesAt(resource, ids, end)];
    for (const id of [...ids].sort((a, b) => a - b)) {
      const [was, is] = [before.get(id), after.get(id)];
      if (!was && is) result.created.push(is);
      else if (was && !is) result.deleted.push(id);
      else if (was && is) {
        const diff = fieldDiff(resource, was, is);
        if (diff.length > 0) result.updated.push({ id, diff });
      }
    }
    return result;
  }

  /** The given entries as they were at a moment (hard-deleted or absent ones left out). */
  private entriesAt(resource: ResourceName, ids: number[], asOf: AsOf): Map<number, EntryRecord> {
    if (ids.length > WHOLE_LIST) {
      const wanted = new Set(ids);
      const { entries } = this.listAt(resource, { position: asOf.position });
      return new Map(entries.filter((entry) => wanted.has(entry.id)).map((entry) => [entry.id, entry]));
    }
    const found = new Map<number, EntryRecord>();
    for (const id of ids) {
      const then = this.entryThen(resource, id, asOf.position);
      if (then && 'entry' in then) found.set(id, then.entry);
    }
    return found;
  }
}

/** The fields (and soft-delete flag) whose values differ, secrets redacted. */
function fieldDiff(resource: ResourceName, was: EntryRecord, is: EntryRecord): DiffMember[] {
  const declared = resourceOf(resource);
  const fields =
    declared.declaration.deletion === 'soft' ? [...declared.fieldNames, 'is_deleted'] : declared.fieldNames;
  const members = fields
    .filter((field) => !same(was[field] ?? null, is[field] ?? null))
    .map((field) => ({ field, before: was[field] ?? null, after: is[field] ?? null }));
  return redactDiff(resource, members);
}
