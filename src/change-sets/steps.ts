import type { WriteRequest } from '../application/writes.js';
import { decide, updatedAs } from '../domain/decide.js';
import { diffedFields } from '../domain/redact.js';
import { fieldDiff } from '../domain/shared/diff.js';
import { nextRevision } from '../domain/shared/effects.js';
import { DomainError } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import { tentatively } from '../domain/tentative.js';
import type { EntryRecord } from '../engine/table.js';
import {
  assertApplicable,
  assertResolved,
  type Bases,
  type Conflict,
  fieldsOf,
  keyOf,
  type Resolve,
  shownValue,
  withResolution,
} from './merge.js';
import { freshOverlay } from './overlay.js';
import { changeSetOf, type Decide, type Open, stagedWrites } from './staged.js';

/** One change of a change set's entry, recorded as an event of the given type. */
const changed = (state: ConfigState, id: number, type: string, fields: Record<string, unknown>): DomainEvent =>
  updatedAs(type, 'change-sets', id, fields, state);

/** A change set opened now: its base is the log's position. */
export function opened(state: ConfigState, fields: { name: string; description: string | null; by: string }) {
  const data = {
    name: fields.name,
    description: fields.description,
    state: 'open',
    base: state.revision + 1,
    created_by: fields.by,
    merge_request_id: null,
    merged_by: null,
    revert_request_id: null,
  };
  return decide({ kind: 'create', resource: 'change-sets', fields: data } as never, state);
}

/** Refuses a change set in another state than `wanted`, saying what it is. */
export function expectState(entry: EntryRecord, wanted: string): void {
  if (entry.state === wanted) return;
  const code = entry.state === 'merged' || entry.state === 'reverted' ? `already_${entry.state}` : 'not_open';
  throw new DomainError(409, code, `change set ${entry.id} is ${entry.state}, not ${wanted}`);
}

export interface MergeAsk {
  /** How many writes were staged when its bases were read: another one since, and it is asked again. */
  staged: number;
  bases: Bases;
  resolve: Resolve;
  requestId: string;
  actor: string;
}

/**
 * The merge, decided on the configuration now: every staged write decided again in order (all
 * refused writes listed), conflicts with what changed since `base` refused unless resolved, then the
 * events of all of them and ChangeSetMerged — one append.
 */
export function merged(
  state: ConfigState,
  id: number,
  ask: MergeAsk,
  deps: { decide: Decide; open: Open; at: string },
) {
  expectState(changeSetOf(state, id), 'open');
  const requests: WriteRequest[] = stagedWrites(state, deps.open, id);
  if (requests.length !== ask.staged)
    throw new DomainError(409, 'changed', `writes were staged in change set ${id} during the merge: merge again`);
  const overlay = freshOverlay(state, id, deps);
  assertApplicable(overlay.failures, requests);
  const conflicts: Conflict[] = fieldsOf(state, overlay.touched, ask.bases).filter((row) => row.conflict);
  assertResolved(conflicts, ask.resolve);
  const events = tentatively(state, deps.at, (fold) =>
    requests.flatMap((request) => {
      const decided = withResolution(deps.decide(request, state), ask.resolve, state);
      fold(decided);
      return decided;
    }),
  );
  const fields = { state: 'merged', merge_request_id: ask.requestId, merged_by: ask.actor };
  return [...events, changed(state, id, 'ChangeSetMerged', fields)];
}

/** An entry a merge touched: its versions just before and just after it, and its values then. */
export interface MergedEntry {
  resource: string;
  id: number;
  /** Its version before the merge; 0: the merge created it. */
  before: number;
  after: number;
  valuesBefore?: EntryRecord;
  valuesAfter?: EntryRecord;
}

/** The entries others changed since the merge, field by field (what a revert would undo of theirs). */
function changedSince(state: ConfigState, entries: readonly MergedEntry[]): Conflict[] {
  return entries.flatMap((entry) => {
    const col = state.collections[entry.resource as 'servers'];
    if (nextRevision(col, entry.id) === entry.after) return [];
    const now = col.get(entry.id);
    return fieldDiff(diffedFields(entry.resource), entry.valuesAfter, now).map((member) => ({
      resource: entry.resource,
      id: entry.id,
      field: member.field,
      base: shownValue(entry.resource, member.field, entry.valuesBefore?.[member.field] ?? null),
      change_set: shownValue(entry.resource, member.field, member.before),
      now: shownValue(entry.resource, member.field, member.after),
    }));
  });
}

/** The write that brings one entry back to before the merge: a revert to that version, or a delete. */
const undoOf = (entry: MergedEntry): WriteRequest =>
  (entry.before === 0
    ? { kind: 'delete', resource: entry.resource, id: entry.id }
    : {
        kind: 'revert',
        resource: entry.resource,
        id: entry.id,
        toVersion: entry.before,
        values: entry.valuesBefore,
      }) as WriteRequest;

/**
 * A merged change set undone as one append: each entry it touched back to its version just before
 * the merge (a created one deleted), last touched first; entries others changed since are a 409
 * (each field listed) unless the resolution says whose side wins (`main`: left as they are).
 */
export function reverted(
  state: ConfigState,
  id: number,
  ask: { entries: MergedEntry[]; resolve: Resolve; requestId: string },
  deps: { decide: Decide; at: string },
) {
  expectState(changeSetOf(state, id), 'merged');
  assertResolved(changedSince(state, ask.entries), ask.resolve);
  const kept = (entry: MergedEntry) =>
    ask.resolve[keyOf(entry.resource, entry.id)] !== 'main' &&
    !Object.entries(ask.resolve).some(
      ([key, side]) => side === 'main' && key.startsWith(`${keyOf(entry.resource, entry.id)}/`),
    );
  const events = tentatively(state, deps.at, (fold) =>
    [...ask.entries]
      .reverse()
      .filter(kept)
      .flatMap((entry) => {
        const decided = deps.decide(undoOf(entry), state);
        fold(decided);
        return decided;
      }),
  );
  return [...events, changed(state, id, 'ChangeSetReverted', { state: 'reverted', revert_request_id: ask.requestId })];
}

/** An open change set dropped: nothing of it is applied. */
export function closed(state: ConfigState, id: number): DomainEvent[] {
  expectState(changeSetOf(state, id), 'open');
  return [changed(state, id, 'ChangeSetClosed', { state: 'closed' })];
}
