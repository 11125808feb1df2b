import type { ChangeRow, HistoryItem, VersionRow } from '../../projections/changes.js';
import type { ResourceName } from '../domain/resources.js';
import type { EntryRecord, Tombstone } from '../domain/shared/collection.js';
import type { ConfigState, RecordedKey } from '../domain/state.js';

/** The read models as stored: the configuration at a checkpoint, and a digest of the event there. */
export interface StoredSnapshot {
  /** `state.revision` is the checkpoint: the last revision of the log folded in. */
  state: ConfigState;
  /** A digest of the event at the checkpoint, to recognise the log (see application/checkpoint.ts). */
  digest?: string;
}

/** One entry as it is after a batch: present, or hard-deleted. */
export interface EntryState {
  resource: ResourceName;
  id: number;
  entry?: EntryRecord;
  tombstone?: Tombstone;
}

/** What the projector saves after folding a batch of events, in one transaction. */
export interface ProjectionBatch {
  revision: number;
  digest: string;
  entries: EntryState[];
  lastIds: Partial<Record<ResourceName, number>>;
  secretKey?: RecordedKey;
  changes: ChangeRow[];
  versions: VersionRow[];
}

/**
 * Where the read models live between starts, with the log revision they reached. `save` never moves
 * the checkpoint back and ignores what it already holds, so instances sharing one store can all write.
 */
export interface ReadModelStore {
  /** Where they are kept, for messages (e.g. a file name). */
  readonly location: string;
  load(): StoredSnapshot;
  save(batch: ProjectionBatch): void;
  /** The history items of one entry, oldest first. */
  history(resource: ResourceName, id: number): HistoryItem[];
  /** The entry as it was at `version` (secrets sealed), or undefined if it never had that version. */
  versionOf(resource: ResourceName, id: number, version: number): EntryRecord | undefined;
  /** Every row, table by table in key order, as comparable lines (replay compares two stores with it). */
  lines(): Iterable<{ table: string; key: string; value: string }>;
  close(): void;
}
