import type Database from 'better-sqlite3';
import type { ResourceName } from '../../domain/resources.js';
import type { EntryRecord } from '../../engine/table.js';
import { Turns } from '../../engine/turns.js';
import type { EntryThen } from '../port.js';
import { storedMembers, type VersionRecord } from './records.js';

/**
 * The change log's folds: a resource's whole list as it was at a position (its last list snapshot,
 * then the version rows after it), and the net change of some entries between two positions (the
 * version rows between them alone). Read a page at a time, a slice of the event loop at a time.
 */

/** Rows per query of a list at a moment. */
const LIST_PAGE = 1000;

/** One version row folded onto the list being rebuilt (see listAt). */
function applyRow(
  resource: string,
  entries: Map<number, Record<string, unknown> | undefined>,
  changedAt: Map<number, number>,
  row: Omit<VersionRecord, 'resource'>,
): void {
  const id = row.entry_id;
  if (row.deleted) {
    entries.set(id, undefined);
    changedAt.delete(id);
    return;
  }
  const entry = row.snapshot ? (JSON.parse(row.snapshot) as Record<string, unknown>) : entries.get(id);
  if (!entry) throw new Error(`${resource}/${id}: a version without its snapshot at ${row.position}`);
  if (!row.snapshot) for (const [field, , after] of storedMembers(row)) entry[field] = after;
  entry.id = id;
  entry.version = row.revision + 1;
  entries.set(id, entry);
  changedAt.set(id, row.position);
}

/** The two sides `netChanges` answers with: changed fields, entries deleted, entries that appeared. */
function netSides(
  fields: Map<number, { before: Record<string, unknown>; after: Record<string, unknown> }>,
  deleted: Set<number>,
  appeared: Map<number, Record<string, unknown> | undefined>,
): { before: Map<number, EntryRecord>; after: Map<number, EntryRecord> } {
  const before = new Map<number, EntryRecord>();
  const after = new Map<number, EntryRecord>();
  for (const [id, sides] of fields) {
    before.set(id, sides.before as EntryRecord);
    after.set(id, sides.after as EntryRecord);
  }
  for (const id of deleted) before.set(id, {} as EntryRecord);
  for (const [id, entry] of appeared) if (entry) after.set(id, entry as EntryRecord);
  return { before, after };
}

function statements(db: Database.Database) {
  return {
    listSnapshot: db.prepare<[string, number], { position: number }>(
      'SELECT MAX(position) AS position FROM list_snapshots_done WHERE resource = ? AND position <= ?',
    ),
    listSnapshotDocs: db.prepare<[string, number, number, number], { id: number; doc: string }>(
      'SELECT id, doc FROM list_snapshots WHERE resource = ? AND position = ? AND id > ? ORDER BY id LIMIT ?',
    ),
    listRows: db.prepare<[string, number, number, number, number], Omit<VersionRecord, 'resource'>>(
      `SELECT entry_id, revision, position, diff, deleted, snapshot FROM versions
       WHERE resource = ? AND (position, entry_id) > (?, ?) AND position <= ? ORDER BY position, entry_id LIMIT ?`,
    ),
    timesOf: db.prepare<[string], { position: number; at: string }>(
      'SELECT position, at FROM changes WHERE position IN (SELECT value FROM json_each(?))',
    ),
  };
}

export class SqliteMoments {
  private readonly sql;

  constructor(
    db: Database.Database,
    /** One entry as it was at a position (the change log's plain question). */
    private readonly entryAt: (resource: ResourceName, id: number, position: number) => EntryThen,
  ) {
    this.sql = statements(db);
  }

  /**
   * The last whole-list snapshot at or before `position`, then every version row after it, folded in
   * place (each entry here is a fresh parse, owned by this call); `updated_at` is then the time of
   * each changed entry's last row, read once per entry rather than joined on every row. Read a page
   * at a time, a slice of TURN_MS at a time: a list of 100,000 servers never holds the event loop.
   */
  async listAt(resource: ResourceName, position: number): Promise<EntryRecord[]> {
    const turns = new Turns();
    const { entries, from } = await this.snapshotBefore(resource, position, turns);
    const changedAt = new Map<number, number>();
    await this.foldRows(resource, entries, changedAt, [from, position], turns);
    await this.stampTimes(entries, changedAt, turns);
    const live = [...entries.values()].filter((entry) => entry !== undefined) as EntryRecord[];
    return live.sort((a, b) => a.id - b.id);
  }

  /**
   * The net change of some entries of a resource from `from` to `to`, from the version rows between
   * the two alone: an entry there at both holds, on each side, only the fields changed between
   * them, each as it was at that side (the first row's `before`, the last row's `after`); one that
   * appears between them is whole at `to`; one deleted between them is an empty record at `from`.
   * Neither the lists before `from` nor their snapshots are read (bench/history.ts, a month's
   * differences: the fold from the last list snapshot up to `from` was half the rows read). An entry
   * deleted and made again between the two is read whole at both, as `entryAt` gives it.
   */
  async netChanges(
    resource: ResourceName,
    ids: number[],
    from: number,
    to: number,
  ): Promise<{ before: Map<number, EntryRecord>; after: Map<number, EntryRecord> }> {
    const turns = new Turns();
    const wanted = new Set(ids);
    const fields = new Map<number, { before: Record<string, unknown>; after: Record<string, unknown> }>();
    const deleted = new Set<number>();
    const appeared = new Map<number, Record<string, unknown> | undefined>();
    const changedAt = new Map<number, number>();
    const whole = new Set<number>();
    // Past every row at `from` itself: those made the entries as they were at `from`.
    for (let cursor = [from, Number.MAX_SAFE_INTEGER]; ; ) {
      const rows = this.sql.listRows.all(resource, cursor[0], cursor[1], to, LIST_PAGE);
      for (const row of rows) {
        const id = row.entry_id;
        if (!wanted.has(id) || whole.has(id)) continue;
        const known = fields.has(id) || deleted.has(id);
        if (appeared.has(id) || (row.diff === null && !known)) applyRow(resource, appeared, changedAt, row);
        else if (row.diff === null || deleted.has(id)) {
          whole.add(id); // there at `from`, deleted, then made again
          fields.delete(id);
          deleted.delete(id);
        } else if (row.deleted) {
          deleted.add(id);
          fields.delete(id);
        } else {
          const sides = fields.get(id) ?? { before: {}, after: {} };
          fields.set(id, sides);
          for (const [field, was, is] of storedMembers(row)) {
            if (!(field in sides.before)) sides.before[field] = was;
            sides.after[field] = is;
          }
        }
      }
      if (rows.length < LIST_PAGE) break;
      cursor = [rows[rows.length - 1].position, rows[rows.length - 1].entry_id];
      await turns.pause();
    }
    await this.stampTimes(appeared, changedAt, turns);
    const { before, after } = netSides(fields, deleted, appeared);
    for (const id of whole) {
      const [was, is] = [this.entryAt(resource, id, from), this.entryAt(resource, id, to)];
      if (was && 'entry' in was) before.set(id, was.entry);
      if (is && 'entry' in is) after.set(id, is.entry);
    }
    return { before, after };
  }

  /** The entries of the last whole-list snapshot at or before `position` (none: position 0). */
  private async snapshotBefore(
    resource: ResourceName,
    position: number,
    turns: Turns,
  ): Promise<{ entries: Map<number, Record<string, unknown> | undefined>; from: number }> {
    const from = this.sql.listSnapshot.get(resource, position)?.position ?? 0;
    const entries = new Map<number, Record<string, unknown> | undefined>();
    for (let after = 0; ; ) {
      const docs = this.sql.listSnapshotDocs.all(resource, from, after, LIST_PAGE);
      for (const { id, doc } of docs) entries.set(id, JSON.parse(doc));
      if (docs.length < LIST_PAGE) break;
      after = docs[docs.length - 1].id;
      await turns.pause();
    }
    return { entries, from };
  }

  /** Folds the resource's version rows after `range[0]` up to `range[1]` into `entries`, in place. */
  private async foldRows(
    resource: ResourceName,
    entries: Map<number, Record<string, unknown> | undefined>,
    changedAt: Map<number, number>,
    [from, to]: [number, number],
    turns: Turns,
  ): Promise<void> {
    for (let cursor = [from, 0]; ; ) {
      const rows = this.sql.listRows.all(resource, cursor[0], cursor[1], to, LIST_PAGE);
      for (const row of rows) applyRow(resource, entries, changedAt, row);
      if (rows.length < LIST_PAGE) break;
      cursor = [rows[rows.length - 1].position, rows[rows.length - 1].entry_id];
      await turns.pause();
    }
  }

  /** Sets `updated_at` of each entry to the time of the position that last changed it. */
  private async stampTimes(
    entries: Map<number, Record<string, unknown> | undefined>,
    changedAt: Map<number, number>,
    turns: Turns,
  ): Promise<void> {
    const positions = [...new Set(changedAt.values())];
    const times = new Map<number, string>();
    for (let start = 0; start < positions.length; start += LIST_PAGE) {
      const some = JSON.stringify(positions.slice(start, start + LIST_PAGE));
      for (const { position, at } of this.sql.timesOf.all(some)) times.set(position, at);
      await turns.pause();
    }
    for (const [id, position] of changedAt) entries.get(id)!.updated_at = times.get(position);
  }
}

/**
 * A list as it was at a position, from the file's primary keys alone (entries at a moment need the
 * change log's indexes): on a file filled in bulk before its indexes are built. `replay` compares the
 * stored list snapshots with the rebuild's lists, and throws a rebuild equal to the stored file away:
 * building its indexes for those lists took 4 s of `replay` on a 2,000,000-event history
 * (bench/history.ts).
 */
export function listAtByKeys(db: Database.Database, resource: ResourceName, position: number): Promise<EntryRecord[]> {
  const moments = new SqliteMoments(db, () => {
    throw new Error("an entry at a moment needs the change log's indexes");
  });
  return moments.listAt(resource, position);
}
