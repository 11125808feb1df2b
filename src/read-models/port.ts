import type { ChangeItem, ChangeRow, HistoryItem, RequestRow, VersionRow } from '../../projections/changes.js';
import type { CollectionName, ResourceName } from '../domain/resources.js';
import type { ConfigState, RecordedKey, RecordedLogKey } from '../domain/state.js';
import type { Frontier, NewNode, NodeReader } from '../engine/merkle.js';
import type { EntryRecord, Tombstone } from '../engine/table.js';

/** The read models as stored: the configuration at their origin (the last event folded), and a digest of that event. */
export interface StoredSnapshot {
  /** `state.revision` is the origin: the last revision of the log folded in (`checkpoint` in the file's meta table). */
  state: ConfigState;
  /** A digest of the event at the origin, to recognise the log (see application/read-model-origin.ts). */
  digest?: string;
  /** The latest event time seen up to the origin (event times made non-decreasing). */
  highWaterAt?: string;
  /** The right edge of the verifiable log's tree at the origin. */
  frontier: Frontier;
}

/** One entry as it is after a batch: present, or hard-deleted. */
export interface EntryState {
  resource: CollectionName;
  id: number;
  entry?: EntryRecord;
  tombstone?: Tombstone;
}

/** What the projector saves after folding a batch of events, in one transaction. */
export interface ProjectionBatch {
  revision: number;
  digest: string;
  highWaterAt: string;
  entries: EntryState[];
  lastIds: Partial<Record<CollectionName, number>>;
  secretKey?: RecordedKey;
  logKey?: RecordedLogKey;
  /** The nodes the verifiable log's tree gained (see storedLevel for those kept). */
  nodes: NewNode[];
  /** The tree's right edge after the batch (Frontier.edge): a start grows the tree from it. */
  edge: string;
  changes: ChangeRow[];
  versions: VersionRow[];
  requests: RequestRow[];
}

/** What the change log can be asked for; every member is optional and they combine with AND. */
export interface ChangeQuery {
  /** Events whose entry, or one of the entries they changed in passing, is of this resource. */
  resource?: string;
  /** With `resource`: that entry only. */
  id?: number;
  actor?: string;
  request_id?: string;
  type?: string;
  /** ISO 8601 UTC times: `since` inclusive, `until` exclusive. */
  since?: string;
  until?: string;
  /** Positions, both exclusive. */
  after?: number;
  before?: number;
  order: 'asc' | 'desc';
  /**
   * The events of tokens (their issue, revocation, re-seal) and of the admins' resources (event
   * rules) are left out unless asked for: they are for admins.
   */
  admin?: boolean;
}

/** The entry as it was at a position: there, hard-deleted, or not created yet (undefined). */
export type EntryThen = { entry: EntryRecord } | { deleted: true } | undefined;

/**
 * Questions about the past, answered from what the projector stored when each event was folded.
 * Each answer waits, without holding the event loop, until every batch handed to `save` before it
 * is stored; long ones are read a slice at a time.
 */
export interface AuditReader {
  /** The history items of one entry, oldest first. */
  history(resource: ResourceName, id: number): Promise<HistoryItem[]>;
  /** The matching change items in order, read a page at a time: the caller takes as many as it needs. */
  changes(query: ChangeQuery): AsyncIterable<ChangeItem>;
  /** The entry as it was at `version` (secrets sealed), or undefined if it never had that version. */
  versionOf(resource: ResourceName, id: number, version: number): Promise<EntryRecord | undefined>;
  entryAt(resource: ResourceName, id: number, position: number): Promise<EntryThen>;
  /** Every entry of a resource as it was at a position (soft-deleted ones included), in id order. */
  listAt(resource: ResourceName, position: number): Promise<EntryRecord[]>;
  /**
   * Some entries of a resource at two positions, `from` before `to`, as far as their net change
   * needs: one there at both holds, on each side, only the fields changed between the two (as they
   * were at that side); one that appears between them is whole at `to`; one deleted between them
   * is an empty record at `from`. Soft-deleted entries count as there; absent ones are left out.
   */
  netChanges(
    resource: ResourceName,
    ids: number[],
    from: number,
    to: number,
  ): Promise<{ before: Map<number, EntryRecord>; after: Map<number, EntryRecord> }>;
  /** The last position whose events, and all before it, happened at or before `time` (ISO UTC). */
  positionAt(time: string): Promise<number>;
  /** When the event at `position` happened (undefined for position 0: before the first event). */
  timeOf(position: number): Promise<string | undefined>;
  /** The entries changed by the events after `from` up to `to` (positions), by resource, in id order. */
  touched(from: number, to: number): Promise<Map<ResourceName, number[]>>;
  /**
   * `use`'s answer, given the nodes of the verifiable log's tree as saved (proofs, roots); the leaf
   * hashes, which are not saved, come from `leaf`.
   */
  withTree<T>(use: (node: NodeReader) => T, leaf: (index: number) => Buffer): Promise<T>;
}

/**
 * The answer of a stored read model found damaged, from that moment until it is rebuilt from the log
 * (memory, which the plain reads serve, is never touched): the question can be asked again shortly.
 */
export class ReadModelsRebuilding extends Error {
  constructor() {
    super('the stored read models were found damaged and are being rebuilt from the log');
    this.name = 'ReadModelsRebuilding';
  }
}

/**
 * Where the read models live between starts, with the log revision they reached. `save` never moves
 * the origin back and ignores what it already holds, so instances sharing one store can all write.
 */
/** A row one store has and the other has not, or has with other values (a JSON array of its values); undefined where absent. */
export interface RowDifference {
  table: string;
  key: string;
  rebuilt?: string;
  stored?: string;
}

export interface ReadModelStore extends AuditReader {
  /** Where they are kept, for messages (e.g. a file name). */
  readonly location: string;
  load(): StoredSnapshot;
  /**
   * Saves the batch, now or later but in the order given; every question asked afterwards sees it.
   * A save that fails is tried again until it lands, and `failed` hears of each failure.
   */
  save(batch: ProjectionBatch, failed: (error: Error) => void): void;
  /** Waits until every batch given to `save` is saved, or its save has failed (holding the thread). */
  settle(): void;
  /** The requests kept for their Idempotency-Key since `at` (ISO UTC). */
  requestsSince(at: string): Iterable<RequestRow>;
  /** Every row, table by table in key order, as comparable lines. */
  lines(): Iterable<{ table: string; key: string; value: string }>;
  /** The rows that differ between this store and `rebuilt` (replay's comparison), table by table in key order. */
  differences(rebuilt: ReadModelStore): RowDifference[];
  /** The whole-list snapshots kept to answer `listAt` quickly, for replay to check by content. */
  listSnapshots(): Iterable<{ resource: ResourceName; position: number; entries: EntryRecord[] }>;
  /**
   * What the file's own integrity check finds wrong in its structure (pages, indexes); empty when
   * whole. Run on a thread of its own where the store has files, so that a rebuild goes on meanwhile.
   */
  integrity(): Promise<string[]>;
  /**
   * Hears, once, of damage found while it served (a question, a save): the store answers every
   * question with ReadModelsRebuilding from then on, until `rebuilt`.
   */
  onDamage(listener: (reason: string) => void): void;
  /**
   * Sets the damaged read models aside (renamed) and starts empty ones in their place, unless another
   * instance over the same place did so first. Questions keep the ReadModelsRebuilding answer until
   * `rebuilt`. Returns the name they were set aside as, if this call did it.
   */
  reset(): string | undefined;
  /** The rebuild after `reset` is saved: questions are answered again. */
  rebuilt(): void;
  /**
   * `thrownAway`: the store is removed next (a rebuild `replay` only compared with the stored one),
   * so a file filled in bulk does not build its indexes first (4 s on a 2,000,000-event history).
   */
  close(thrownAway?: boolean): void;
}
