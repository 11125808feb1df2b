import type { RequestRow } from '../../../projections/changes.js';
import type { EntryRecord } from '../../engine/table.js';
import type { EntryState, ProjectionBatch } from '../port.js';
import { encodeDiff, storedLevel } from './schema.js';

/** A projection batch as the saving thread takes it (a SaveJob), and when a list snapshot is due. */

/**
 * A whole-list snapshot of a resource is taken once this many of its version rows came after the
 * last one (at least LIST_SNAPSHOT_MIN, else ten times the size of the list then): a list as it was
 * at any position is one snapshot and at most that many rows, and the snapshots take about a tenth
 * of the room the version rows do.
 */
const LIST_SNAPSHOT_MIN = 1000;
const LIST_SNAPSHOT_FACTOR = 10;

/** Version rows of a resource since its last list snapshot was taken, and the size of that list. */
export interface ListSince {
  rows: number;
  size: number;
}

/** Whether `count` more version rows make a resource's list snapshot due. */
export const listDue = (since: ListSince, count: number) =>
  since.rows + count >= Math.max(LIST_SNAPSHOT_MIN, LIST_SNAPSHOT_FACTOR * since.size);

/**
 * The meta row a rebuild's file keeps of its last consistent point (SaveJob.consistent): resumed only
 * when it is the file's checkpoint, that is when its last commit was at one.
 */
export const CONSISTENT_AT = 'rebuild_consistent_at';

/**
 * A projection batch as it is written: plain values with their JSON already made, so that it can be
 * handed to another thread as it is (see SaveThread).
 */
export interface SaveJob {
  revision: number;
  digest: string;
  highWaterAt: string;
  /** Five values per entry: resource, id, doc (null: hard-deleted), tombstone version and time (or nulls). */
  entries: (string | number | null)[];
  lastIds: [string, number][];
  secretKey?: string;
  logKey?: string;
  /** The tree's nodes to keep: level and index, one node after another; their hashes in `hashes`, 32 bytes each. */
  nodes: number[];
  hashes: Uint8Array;
  /** The tree's right edge after the job (Frontier.edge). */
  edge: string;
  /** The change rows' values, one row after another. */
  changes: unknown[];
  versions: unknown[];
  /** Version rows per resource: what makes a list snapshot due. */
  versionCounts: [string, number][];
  requests: RequestRow[];
  /**
   * The resources whose list snapshot is due at this job, when the sender decides it (a file filled
   * in bulk: see BulkBatches); otherwise the saver does, from the counts it keeps in the file.
   */
  listsDue?: string[];
  /**
   * A file filled in bulk: after this job, the file holds the read models exactly as they are at its
   * revision (no entry held back; see BulkBatches). Its transaction ends here and nowhere else, so a
   * rebuild killed at any moment leaves a file at such a point, which the next one resumes.
   */
  consistent?: boolean;
}

/** Appends the entries' values to `values` (see SaveJob.entries); `made` keeps each entry's JSON. */
export function encodeEntries(
  states: Iterable<EntryState>,
  values: (string | number | null)[],
  made?: Map<EntryRecord, string>,
): (string | number | null)[] {
  for (const { resource, id, entry, tombstone } of states) {
    let doc: string | null = null;
    if (entry) {
      doc = JSON.stringify(entry);
      made?.set(entry, doc);
    }
    values.push(resource, id, doc);
    values.push(tombstone?.version ?? null, tombstone?.created_at ?? null);
  }
  return values;
}

export function encode(batch: ProjectionBatch): SaveJob {
  // An entry saved is often also the snapshot of its last version (always, for one created in this
  // batch and not changed since): its JSON is made once for both.
  const made = new Map<EntryRecord, string>();
  const entries = encodeEntries(batch.entries, [], made);
  const changes: unknown[] = [];
  for (const row of batch.changes) {
    // `hw_at` is stored only where it differs from `at` (a clock that went back): 24 bytes a row less.
    changes.push(row.position, row.type, row.at, row.hw_at === row.at ? null : row.hw_at, row.actor, row.request_id);
    changes.push(row.resource ?? null, row.entry_id ?? null, JSON.stringify(row.data));
  }
  const versions: unknown[] = [];
  const counts = new Map<string, number>();
  for (const row of batch.versions) {
    // The diff of an entry that appears is its snapshot's fields: not stored twice (see toVersion).
    versions.push(row.resource, row.entry_id, row.revision, row.position, row.appears ? null : encodeDiff(row.diff));
    versions.push(row.deleted ? 1 : 0, row.snapshot ? (made.get(row.snapshot) ?? JSON.stringify(row.snapshot)) : null);
    counts.set(row.resource, (counts.get(row.resource) ?? 0) + 1);
  }
  // One buffer for the batch's hashes: one piece to hand to the saving thread, not one per node.
  const kept = batch.nodes.filter((node) => storedLevel(node.level));
  const nodes: number[] = [];
  const hashes = Buffer.allocUnsafe(kept.length * 32);
  kept.forEach((node, i) => {
    nodes.push(node.level, node.index);
    node.hash.copy(hashes, i * 32);
  });
  return {
    revision: batch.revision,
    digest: batch.digest,
    highWaterAt: batch.highWaterAt,
    entries,
    lastIds: Object.entries(batch.lastIds),
    secretKey: batch.secretKey && JSON.stringify(batch.secretKey),
    logKey: batch.logKey && JSON.stringify(batch.logKey),
    nodes,
    hashes,
    edge: batch.edge,
    changes,
    versions,
    versionCounts: [...counts],
    requests: batch.requests,
  };
}
