import type { Journal } from '../../engine/journal.js';
import type { EntryRecord } from '../../engine/table.js';
import type { CollectionName } from '../resources.js';
import type { Collection, ConfigState } from '../state.js';
import type { LoggedEvent } from './types.js';

/** One entry changed by an event: the event's own entry first, then the entries it changed in passing. */
export interface Effect {
  resource: CollectionName;
  id: number;
  /** The entry's revision in its own stream for this event (0 for its creation). */
  revision: number;
  /** Undefined before its creation (or while hard-deleted). */
  before?: EntryRecord;
  /** Undefined after a hard delete. */
  after?: EntryRecord;
}

/** How an event type changes the state. */
export type Apply = (state: ConfigState, event: LoggedEvent, journal?: Journal) => Effect[];

export class FoldError extends Error {
  override name = 'FoldError';
}

export const idOf = (event: LoggedEvent) => event.data.id as number;

/** The entry's next revision in its own stream: its version, or one past the delete that buried it. */
export function nextRevision(col: Collection, id: number): number {
  const entry = col.get(id);
  if (entry) return entry.version;
  const tombstone = col.tombstone(id);
  return tombstone ? tombstone.version + 1 : 0;
}

export function existing(col: Collection, event: LoggedEvent): EntryRecord {
  const entry = col.get(idOf(event));
  if (!entry) throw new FoldError(`${event.type} for ${col.spec.name}/${idOf(event)}, which the state does not hold`);
  return entry;
}

/** Sets one entry and reports it as an effect. */
export function change(
  col: Collection,
  id: number,
  after: EntryRecord | undefined,
  journal: Journal | undefined,
): Effect {
  const effect: Effect = {
    resource: col.spec.name as CollectionName,
    id,
    revision: nextRevision(col, id),
    before: col.get(id),
    after,
  };
  col.put(id, after, journal);
  return effect;
}
