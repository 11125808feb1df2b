import type { WriteRequest } from '../application/writes.js';
import type { Effect } from '../domain/evolve.js';
import { DomainError, NotFound } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { Fold } from '../domain/tentative.js';
import type { EntryRecord } from '../engine/table.js';

/** How a staged write is decided: every rule of the write, on a state (Writes.decided). */
export type Decide = (request: WriteRequest, state: ConfigState) => DomainEvent[];
/** Opens a value sealed under the service's key. */
export type Open = (sealed: string) => string | undefined;

/** The most writes one change set holds. */
export const MAX_STAGED = 20_000;

/** The change set, which must exist. */
export function changeSetOf(state: ConfigState, id: number): EntryRecord {
  const entry = state.collections['change-sets'].get(id);
  if (!entry) throw new NotFound('change-sets', id);
  return entry;
}

/** The change set, which must be open. */
export function openChangeSet(state: ConfigState, id: number): EntryRecord {
  const entry = changeSetOf(state, id);
  if (entry.state !== 'open') throw new DomainError(409, 'not_open', `change set ${id} is ${entry.state}`);
  return entry;
}

/** Staged writes opened once: an entry is never changed, so its request never either. */
const opened = new WeakMap<EntryRecord, WriteRequest>();

/** The writes staged in a change set, in the order they were staged. */
export function stagedWrites(state: ConfigState, open: Open, id: number): WriteRequest[] {
  const col = state.collections['change-set-operations'];
  const ids = [...col.referencing('change_set', id)].sort((a, b) => a - b);
  return ids.map((op) => {
    const entry = col.get(op)!;
    let request = opened.get(entry);
    if (!request) {
      const plain = open(entry.request as string);
      if (plain === undefined)
        throw new DomainError(409, 'unreadable', `staged write ${op} was sealed under another key`);
      request = JSON.parse(plain) as WriteRequest;
      opened.set(entry, request);
    }
    return request;
  });
}

/** The entries a change set touches, as it leaves them (undefined: hard-deleted), by resource then id. */
export type Touched = Map<string, Map<number, EntryRecord | undefined>>;

/** A staged write that cannot be applied on the configuration as it is now. */
export interface Failure {
  index: number;
  error: Error;
}

/** Records what a write's effects leave of each entry it touched. */
export function touch(touched: Touched, effects: readonly Effect[]): void {
  for (const effect of effects) {
    let of = touched.get(effect.resource);
    if (!of) {
      of = new Map();
      touched.set(effect.resource, of);
    }
    of.set(effect.id, effect.after);
  }
}

/**
 * Folds the staged writes, each decided on the state the ones before it leave, into the state (inside
 * `tentatively`): what they touch, and those refused now (left out).
 */
export function applyStaged(state: ConfigState, requests: readonly WriteRequest[], decide: Decide, fold: Fold) {
  const touched: Touched = new Map();
  const failures: Failure[] = [];
  requests.forEach((request, index) => {
    try {
      touch(touched, fold(decide(request, state)));
    } catch (error) {
      failures.push({ index, error: error as Error });
    }
  });
  return { touched, failures };
}
