import type { ConfigState } from '../state.js';
import { allocateId, loadForWrite } from './guards.js';
import type { Collection, Created, Deleted, DomainEvent, Entry, EntryCommand, Resource, Updated } from './types.js';

/** What one resource tells the shared create/replace/patch decisions. */
export interface EntryRules<P extends string, F extends object> {
  resource: Resource;
  prefix: P;
  /** Every field of the entry that a write can change, in the order events list them. */
  fields: readonly (keyof F & string)[];
  collection(state: ConfigState): Collection<Entry<F>>;
  /** Uniqueness and references of the entry as it would become (`before` is undefined on create). */
  check(state: ConfigState, next: F, before: Entry<F> | undefined, id: number): void;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function decideCreate<P extends string, F extends object>(
  rules: EntryRules<P, F>,
  command: Extract<EntryCommand<F>, { type: 'create' }>,
  state: ConfigState,
): Created<P, F>[] {
  const id = allocateId(rules.resource, rules.collection(state), command.id);
  rules.check(state, command.fields, undefined, id);
  // The event holds exactly the resource's fields, in the resource's order: replays compare byte for byte.
  const fields = Object.fromEntries(rules.fields.map((field) => [field, command.fields[field]])) as F;
  return [{ type: `${rules.prefix}Created`, data: { id, ...fields } }];
}

/** PUT and PATCH: the entry as it would become, compared field by field; no difference, no event. */
export function decideChange<P extends string, F extends object>(
  rules: EntryRules<P, F>,
  command: Extract<EntryCommand<F>, { type: 'replace' | 'patch' }>,
  state: ConfigState,
): Updated<P, F>[] {
  const current = loadForWrite(rules.resource, rules.collection(state), command.id, command.ifMatch);
  const next = { ...current } as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const field of rules.fields) {
    const value = (command.fields as Record<string, unknown>)[field];
    if (value === undefined) continue; // PATCH: not sent; PUT: a write-only field keeps its stored value
    next[field] = value;
    if (!same(value, current[field])) changes[field] = value;
  }
  if (Object.keys(changes).length === 0) return [];
  rules.check(state, next as F, current, command.id);
  return [{ type: `${rules.prefix}Updated`, data: { id: command.id, changes: changes as Partial<F> } }];
}

/** The events of a hard delete, once the resource's own guards have passed. */
export function hardDelete<P extends string, E extends DomainEvent = never>(
  prefix: P,
  id: number,
  cascade: E[] = [],
): (Deleted<P> | E)[] {
  return [{ type: `${prefix}Deleted`, data: { id } }, ...cascade];
}
