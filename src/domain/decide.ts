import { withId } from '../engine/entries.js';
import type { EntryRecord } from '../engine/table.js';
import type { Command } from './commands.js';
import { addedIds, allocateId, checkExpected, checkUnique, heldIds, loadForWrite, referenceErrors } from './guards.js';
import { type CollectionName, collectionOf, referencesTo } from './resources.js';
import type { Resource } from './shared/declaration.js';
import { sameValue } from './shared/diff.js';
import {
  DeleteGuarded,
  type Dependent,
  fieldError,
  InUse,
  NotFound,
  PreconditionFailed,
  ValidationFailed,
} from './shared/errors.js';
import type { DomainEvent } from './shared/types.js';
import type { ConfigState } from './state.js';

type Of<K extends Command['kind']> = Extract<Command, { kind: K }>;
type Values = Record<string, unknown>;

/** An entry as a write would make it, for a rule a wing adds (DecideRules.check). */
export interface CheckedEntry {
  resource: Resource;
  id: number;
  next: Values;
  /** The entry as it is (undefined: created, or brought back by a revert). */
  before?: Values;
  /** The fields whose values the write changes. */
  changed: ReadonlySet<string>;
  state: ConfigState;
}

/**
 * What a wing adds to every decision (PmaControl's columns, while its tables are written): a rule
 * every entry a write makes must follow, and where new ids start. The plug point of domain rules that
 * belong to another system; the application passes them (Writes.addRules).
 */
export interface DecideRules {
  /** Refuses the write by throwing a DomainError (a 422 on a field, a 409). */
  check?(entry: CheckedEntry): void;
  /** The smallest id a new entry of `resource` may be given (the ids below it are another system's). */
  firstId?(resource: string): number;
}

const NO_RULES: DecideRules = {};

/** The fields of `next` whose values differ from `before` (all of them when there is no `before`). */
function changedFields(resource: Resource, next: Values, before?: Values): Set<string> {
  return new Set(resource.fieldNames.filter((field) => !before || !sameValue(next[field], before[field])));
}

/**
 * The resource's own rule, unique values and the references of the changed fields, then the rules a
 * wing adds, for an entry as it would become.
 */
function checkEntry(
  state: ConfigState,
  resource: Resource,
  next: Values,
  id: number,
  rules: DecideRules,
  before?: Values,
): void {
  const refused = resource.declaration.refuse?.(next);
  if (refused) throw new ValidationFailed([refused]);
  const changed = changedFields(resource, next, before);
  checkUnique(state.collections[resource.name as CollectionName], next, id, changed);
  const errors = referenceErrors(state, resource, (link) =>
    changed.has(link.field) ? addedIds(link, next, before) : [],
  );
  if (errors.length > 0) throw new ValidationFailed(errors);
  rules.check?.({ resource, id, next, ...(before ? { before } : {}), changed, state });
}

/** A creation event's data: the id, then exactly the resource's fields in declaration order (replays compare byte for byte). */
const createdData = (resource: Resource, id: number, fields: Values): Values => withId(id, resource.fieldNames, fields);

function decideCreate(command: Of<'create'>, state: ConfigState, rules: DecideRules): DomainEvent[] {
  const resource = collectionOf(command.resource);
  const id = allocateId(state.collections[command.resource], command.id, rules.firstId?.(command.resource));
  const fields = command.fields as Values;
  checkEntry(state, resource, fields, id, rules);
  return [{ type: resource.events.created, data: createdData(resource, id, fields) }];
}

/** The references a soft-deleted entry needs before it can be live again, reported on `is_deleted`. */
function restoreErrors(state: ConfigState, resource: Resource, next: Values): void {
  const errors = referenceErrors(state, resource, (link) => heldIds(next[link.field]), 'is_deleted');
  if (errors.length > 0) throw new ValidationFailed(errors);
}

/** PUT and PATCH: the entry as it would become, compared field by field; no difference, no event. */
function decideChange(command: Of<'replace'> | Of<'patch'>, state: ConfigState, rules: DecideRules): DomainEvent[] {
  const resource = collectionOf(command.resource);
  const current = loadForWrite(state.collections[command.resource], command.id, command.expected);
  const restoring = command.kind === 'patch' && command.restore === true && current.is_deleted === true;
  const changes: Values = {};
  for (const [field, value] of Object.entries(command.fields as Values)) {
    // Undefined: PATCH did not send it, or PUT left out a secret (it keeps its stored value).
    if (value === undefined || !resource.fieldNames.includes(field) || sameValue(value, current[field])) continue;
    if (resource.declaration.fields[field].setOnce && current[field] != null) continue;
    changes[field] = value;
  }
  const next = { ...current, ...changes };
  if (restoring) restoreErrors(state, resource, next);
  const events: DomainEvent[] = restoring ? [{ type: resource.events.restored, data: { id: current.id } }] : [];
  if (Object.keys(changes).length === 0) return events;
  checkEntry(state, resource, next, current.id, rules, current);
  return [...events, { type: resource.events.updated, data: { id: current.id, changes } }];
}

/** The entries that stop a hard delete, as the references to this resource declare. */
function dependents(state: ConfigState, resource: Resource, id: number): Dependent[] {
  const found: Dependent[] = [];
  for (const link of referencesTo(resource.name as CollectionName)) {
    const policy = link.reference.whenTargetDeleted;
    if (policy === 'remove') continue;
    const col = state.collections[link.from as CollectionName];
    for (const referrer of col.referencing(link.field, id)) {
      if (policy === 'refuse' || !col.get(referrer)?.is_deleted) found.push({ resource: link.from, id: referrer });
    }
  }
  return found.sort((a, b) => a.resource.localeCompare(b.resource) || a.id - b.id);
}

function decideDelete(command: Of<'delete'>, state: ConfigState): DomainEvent[] {
  const resource = collectionOf(command.resource);
  const entry = loadForWrite(state.collections[command.resource], command.id, command.expected);
  const event = { type: resource.events.deleted, data: { id: entry.id } };
  if (resource.declaration.deletion === 'soft') return entry.is_deleted ? [] : [event];
  const guarded = resource.declaration.guardDelete?.(entry);
  if (guarded) throw new DeleteGuarded(resource.name, entry.id, guarded);
  const blocking = dependents(state, resource, entry.id);
  if (blocking.length > 0) throw new InUse(resource.name, entry.id, blocking);
  // What happens to the entries that referenced it is derived by the fold from this one event.
  return [event];
}

/** The entry becomes what it was at a version it had, under every rule of a PUT (and of a restore). */
function decideRevert(command: Of<'revert'>, state: ConfigState, rules: DecideRules): DomainEvent[] {
  const resource = collectionOf(command.resource);
  const col = state.collections[command.resource];
  const current: EntryRecord | undefined = col.get(command.id);
  if (!current && !col.tombstone(command.id)) throw new NotFound(resource.name, command.id);
  if (current) checkExpected(command.expected, current.version);
  else if (command.expected !== undefined && command.expected !== 'any')
    throw new PreconditionFailed(command.expected, 0);
  if (!command.values) {
    throw fieldError(
      'version',
      'unknown_version',
      `${resource.name}/${command.id} never had version ${command.toVersion}`,
    );
  }
  const soft = resource.declaration.deletion === 'soft';
  const values = Object.fromEntries(resource.fieldNames.map((field) => [field, (command.values as Values)[field]]));
  const target: Values = soft ? { ...values, is_deleted: command.values.is_deleted === true } : values;
  if (current && !changedFields(resource, target, current).size && current.is_deleted === target.is_deleted) return [];
  if (soft && !target.is_deleted && current?.is_deleted) restoreErrors(state, resource, target);
  // A hard-deleted entry coming back is checked as a creation: every unique value, every reference.
  checkEntry(state, resource, target, command.id, rules, current);
  const data = { id: command.id, to_version: command.toVersion, values: target };
  return [{ type: resource.events.reverted, data }];
}

/**
 * The one pure decision: a command and the whole configuration in, the events to record out; `rules`:
 * what the wings add.
 */
export function decide(command: Command, state: ConfigState, rules: DecideRules = NO_RULES): DomainEvent[] {
  switch (command.kind) {
    case 'create':
      return decideCreate(command, state, rules);
    case 'replace':
    case 'patch':
      return decideChange(command, state, rules);
    case 'delete':
      return decideDelete(command, state);
    case 'revert':
      return decideRevert(command, state, rules);
    default:
      return assertNever(command);
  }
}

/**
 * A change of one entry recorded as an event type of its collection's own (its `updateEvents`: an
 * approval's vote, a change set's merge): the generic update, named for what happened.
 */
export function updatedAs(type: string, resource: CollectionName, id: number, fields: Values, state: ConfigState) {
  const [event] = decide({ kind: 'patch', resource, id, fields } as Command, state);
  return { ...event, type };
}

export function assertNever(value: never): never {
  throw new Error(`unexpected ${JSON.stringify(value)}`);
}
