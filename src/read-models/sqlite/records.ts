import { type ChangeRow, diffOf, type VersionRow } from '../../../projections/changes.js';
import type { EntryRecord } from '../../engine/table.js';
import { decodeDiff } from './schema.js';

/** The change log's rows as the `changes` and `versions` tables hold them, and how an entry is folded from its versions. */

export interface ChangeRecord extends Omit<ChangeRow, 'data' | 'hw_at'> {
  data: string;
  /** Null where it equals `at`. */
  hw_at: string | null;
}
export interface VersionRecord extends Omit<VersionRow, 'diff' | 'snapshot' | 'deleted' | 'appears'> {
  /** Null when the entry appears with this version: its diff is then every field of the snapshot. */
  diff: string | null;
  deleted: number;
  snapshot: string | null;
}

export const toChange = (row: ChangeRecord): ChangeRow => ({
  ...row,
  hw_at: row.hw_at ?? row.at,
  data: JSON.parse(row.data),
});
export function toVersion({ snapshot, deleted, diff, ...row }: VersionRecord): VersionRow {
  const entry = snapshot ? JSON.parse(snapshot) : undefined;
  return {
    ...row,
    // The same function made the diff that was not stored, from the same entry.
    diff: diff === null ? diffOf(row.resource, undefined, entry) : decodeDiff(diff),
    ...(deleted ? { deleted: true } : {}),
    ...(diff === null ? { appears: true } : {}),
    ...(entry ? { snapshot: entry } : {}),
  };
}

export type Row = VersionRecord & { at: string };

/**
 * The stored diff of a version without a snapshot (only a version with one can leave it out), as
 * stored: `[field, before, after]` triples, read without making a member of each.
 */
export const storedMembers = (row: Pick<VersionRecord, 'diff'>): [string, unknown, unknown][] => JSON.parse(row.diff!);

/** Folds version rows onto an entry: a snapshot replaces it, a diff sets its `after` values. */
export function applyRows(start: Record<string, unknown> | undefined, rows: Row[]): EntryRecord | undefined {
  let entry = start;
  let createdAt = start?.created_at as string | undefined;
  for (const row of rows) {
    if (row.deleted) entry = undefined;
    else {
      if (row.snapshot) entry = JSON.parse(row.snapshot);
      else {
        entry = { ...entry };
        for (const [field, , after] of storedMembers(row)) entry[field] = after;
        entry.created_at ??= createdAt;
      }
      entry!.version = row.revision + 1;
      entry!.updated_at = row.at;
      createdAt = entry!.created_at as string;
    }
  }
  return entry as EntryRecord | undefined;
}
