import type { ChangeItem } from '../../projections/changes.js';
import {
  COLLECTION_NAMES,
  type CollectionName,
  collectionOf,
  type ResourceName,
  resourceOf,
} from '../domain/resources.js';
import { Conflict, type FieldError, ValidationFailed } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { DomainEvent } from '../domain/shared/types.js';
import type { ConfigState } from '../domain/state.js';
import type { SecretBox } from './secrets.js';
import { type ImportItem, itemPath } from './transfer.js';

/**
 * What the write catalogue (writes.ts) works out beside deciding: the costly checks of an input, run
 * off the event loop; what a revert could not put back; the events of a key rotation.
 */

type Values = Record<string, unknown>;

/** An entry a delete changed, and the field that no longer holds the entry brought back. */
export interface NotRestored {
  resource: string;
  id: number;
  field: string;
}

/** The resource's costly checks of an input (see ResourceDeclaration.prove): a 422 if any fails. */
export async function proven(resource: ResourceName, input: Values): Promise<void> {
  const errors = (await resourceOf(resource).declaration.prove?.(input)) ?? [];
  if (errors.length > 0) throw new ValidationFailed(errors);
}

/** The costly checks of an import's entries, a few at a time (the thread pool has four threads): their problems, and the entries that have some. */
export async function proofProblems(
  items: readonly ImportItem[],
): Promise<{ problems: FieldError[]; failed: Set<ImportItem> }> {
  const problems: FieldError[] = [];
  const failed = new Set<ImportItem>();
  const proving = items.filter((item) => resourceOf(item.resource).declaration.prove);
  for (let start = 0; start < proving.length; start += 4) {
    await Promise.all(
      proving.slice(start, start + 4).map(async (item) => {
        const errors = (await resourceOf(item.resource).declaration.prove!(item.input)) ?? [];
        if (errors.length > 0) failed.add(item);
        for (const error of errors)
          problems.push({ ...error, field: itemPath(item.resource, item.index, error.field) });
      }),
    );
  }
  return { problems, failed };
}

/**
 * What a hard delete (`deletion`, from the change log) did to other entries, where it is still so:
 * the entry `id`, back now, is not in that field again. A revert brings back one entry; putting it
 * back where it was is left to the client, which this lists.
 */
export function notRestored(state: ConfigState, id: number, deletion: ChangeItem | undefined): NotRestored[] {
  const held = (value: unknown) => (Array.isArray(value) ? value.includes(id) : value === id);
  const found: NotRestored[] = [];
  for (const effect of deletion?.effects ?? []) {
    const entry = state.collections[effect.resource as CollectionName]?.get(effect.id);
    for (const { field, before, after } of effect.diff) {
      if (held(before) && !held(after) && entry && !held(entry[field])) {
        found.push({ resource: effect.resource, id: effect.id, field });
      }
    }
  }
  return found;
}

/**
 * Key rotation: every secret of every entry (passwords, private keys, token digests) re-sealed under
 * `next`, one SecretsResealed event per entry, then the new key's fingerprint recorded.
 */
export function decideRotation(state: ConfigState, current: SecretBox, next: SecretBox, fingerprint: string) {
  if (state.secretKey?.fingerprint === fingerprint) throw new Conflict('the log already names this key');
  const events: DomainEvent[] = [];
  let [entries, secrets] = [0, 0];
  for (const name of COLLECTION_NAMES) {
    const fields = collectionOf(name).secretFields;
    if (fields.length === 0) continue;
    for (const entry of state.collections[name].inOrder()) {
      const values: Record<string, string> = {};
      for (const field of fields) {
        const sealed = entry[field];
        if (typeof sealed === 'string' && sealed !== '') values[field] = next.seal(current.open(sealed as Sealed));
      }
      if (Object.keys(values).length === 0) continue;
      events.push({ type: 'SecretsResealed', data: { resource: name, id: entry.id, values } });
      entries++;
      secrets += Object.keys(values).length;
    }
  }
  events.push({ type: 'SecretKeyRecorded', data: { fingerprint } });
  return { events, entries, secrets };
}
