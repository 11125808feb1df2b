import type { WriteRequest } from '../application/writes.js';
import { resourceOfEvent } from '../domain/evolve.js';
import { diffedFields, REDACTED } from '../domain/redact.js';
import { collectionOf } from '../domain/resources.js';
import { sameValue } from '../domain/shared/diff.js';
import { DomainError, ValidationFailed } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { EntryRecord } from '../engine/table.js';
import type { Failure, Touched } from './staged.js';

/** Which side wins a conflict: the change set's value, or the configuration's as it is (`main`). */
export type Side = 'change-set' | 'main';
/** Per field (`servers/42/id_environment`) or per entry (`servers/42`), which side wins. */
export type Resolve = Record<string, Side>;
/** The entries as they were at the change set's base, by `resource/id` (undefined: none then). */
export type Bases = Map<string, EntryRecord | undefined>;

/** A field the configuration changed since `base` to another value than the change set's. */
export interface Conflict {
  resource: string;
  id: number;
  field: string;
  base: unknown;
  change_set: unknown;
  now: unknown;
}

export const keyOf = (resource: string, id: number) => `${resource}/${id}`;

/** A value as a conflict or a diff shows it: a secret `[redacted]` where one is held. */
export function shownValue(resource: string, field: string, value: unknown): unknown {
  return value !== null && collectionOf(resource).secretFields.includes(field) ? REDACTED : value;
}

/** For each field of each touched entry: its value at base, in the change set, now; and whether they conflict. */
export function fieldsOf(state: ConfigState, touched: Touched, bases: Bases) {
  const rows: (Conflict & { conflict: boolean })[] = [];
  for (const [resource, entries] of touched) {
    const fields = diffedFields(resource);
    for (const [id, changed] of entries) {
      const now = state.collections[resource as 'servers'].get(id);
      const key = keyOf(resource, id);
      const base = bases.has(key) ? bases.get(key) : now;
      for (const field of fields) {
        const [b, c, n] = [base?.[field] ?? null, changed?.[field] ?? null, now?.[field] ?? null];
        if (sameValue(b, c) && sameValue(c, n)) continue;
        const show = (value: unknown) => shownValue(resource, field, value);
        const conflict = !sameValue(b, n) && !sameValue(c, n);
        rows.push({ resource, id, field, base: show(b), change_set: show(c), now: show(n), conflict });
      }
    }
  }
  return rows;
}

/** The side a resolution gives a field, if any. */
const sideOf = (resolve: Resolve, resource: string, id: number, field: string): Side | undefined =>
  resolve[`${resource}/${id}/${field}`] ?? resolve[keyOf(resource, id)];

/** Refuses conflicts no resolution covers (409, each listed), and resolutions that name no conflict (422). */
export function assertResolved(conflicts: readonly Conflict[], resolve: Resolve): void {
  const named = new Set(conflicts.flatMap((c) => [keyOf(c.resource, c.id), `${c.resource}/${c.id}/${c.field}`]));
  const unknown = Object.keys(resolve).filter((key) => !named.has(key));
  if (unknown.length > 0)
    throw new ValidationFailed(
      unknown.map((key) => ({ field: `resolve.${key}`, code: 'unknown_conflict', message: 'names no conflict' })),
    );
  const open = conflicts.filter((c) => sideOf(resolve, c.resource, c.id, c.field) === undefined);
  if (open.length > 0)
    throw new DomainError(
      409,
      'conflict',
      `${open.length} field${open.length > 1 ? 's' : ''} changed since the change set's base: say which side wins (resolve)`,
      { conflicts: open },
    );
}

/** Staged writes the configuration now refuses: the merge is refused, each listed. */
export function assertApplicable(failures: readonly Failure[], requests: readonly WriteRequest[]): void {
  if (failures.length === 0) return;
  const listed = failures.map(({ index, error }) => ({
    operation: index,
    write: `${requests[index].kind} ${requests[index].resource}${'id' in requests[index] ? `/${(requests[index] as { id: number }).id}` : ''}`,
    status: error instanceof DomainError ? error.status : 500,
    code: error instanceof DomainError ? error.code : 'internal',
    detail: error.message,
  }));
  throw new DomainError(
    409,
    'refused_writes',
    `${failures.length} staged write(s) are refused on the configuration now`,
    {
      refused: listed,
    },
  );
}

/**
 * A write's events with the configuration's side kept where a resolution says `main`: the fields left
 * out of an update, a delete or a restore of the entry dropped, a revert's values those of now.
 */
export function withResolution(events: DomainEvent[], resolve: Resolve, state: ConfigState): DomainEvent[] {
  if (Object.keys(resolve).length === 0) return events;
  return events.flatMap((event) => {
    const resource = resourceOfEvent(event.type);
    if (!resource) return [event];
    const id = event.data.id as number;
    const names = collectionOf(resource).events;
    const main = (field: string) => sideOf(resolve, resource, id, field) === 'main';
    const mains = diffedFields(resource).filter(main);
    if (mains.length === 0) return [event];
    if (event.type === names.deleted || event.type === names.restored) return [];
    const keep = (values: Record<string, unknown>, now?: EntryRecord) =>
      Object.fromEntries(
        Object.entries(values).flatMap(([field, value]) =>
          !main(field) ? [[field, value]] : now ? [[field, now[field]]] : [],
        ),
      );
    if (event.type === names.updated) {
      const changes = keep(event.data.changes as Record<string, unknown>);
      return Object.keys(changes).length > 0 ? [{ ...event, data: { ...event.data, changes } }] : [];
    }
    if (event.type === names.reverted) {
      const now = state.collections[resource].get(id);
      return [{ ...event, data: { ...event.data, values: keep(event.data.values as Record<string, unknown>, now) } }];
    }
    return [event];
  });
}
