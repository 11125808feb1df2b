import type { HistoryItem, HistoryRow } from '../../projections/history.js';
import type { Resource } from '../domain/shared/types.js';
import type { AnyEntry, ConfigState } from '../domain/state.js';

export interface ReadModelSnapshot {
  state: ConfigState;
  /** The last revision of the log folded into `state`; -1 before the first event. */
  revision: number;
  /** A digest of the event at `revision`, to recognise the log the read models were built from. */
  digest?: string;
}

export interface EntryChange {
  resource: Resource;
  id: number;
  /** Undefined: the entry was hard-deleted. */
  entry?: AnyEntry;
}

export interface ProjectionBatch {
  revision: number;
  /** A digest of the event at `revision`. */
  digest: string;
  /** The state's facts about no entry (the recorded key fingerprint). */
  secretKey?: ConfigState['secretKey'];
  entries: EntryChange[];
  lastIds: Partial<Record<Resource, number>>;
  history: HistoryRow[];
}

/**
 * Where the read models live between starts, with the log revision they reached. `save` is
 * idempotent and never moves the checkpoint back, so instances sharing one store can all write it.
 */
export interface ReadModelStore {
  /** Where they are kept, for messages (e.g. a file name). */
  readonly location: string;
  load(): ReadModelSnapshot;
  save(batch: ProjectionBatch): void;
  history(resource: Resource, id: number): HistoryItem[];
  /** Everything, for `replay` to compare with a rebuild. */
  dump(): { snapshot: ReadModelSnapshot; history: HistoryRow[] };
  /** Replaces everything at once (`replay --apply`). */
  replace(snapshot: ReadModelSnapshot, history: HistoryRow[]): void;
  close(): void;
}
