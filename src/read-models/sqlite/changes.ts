// Over 300 lines: the change log's SQL questions (changes, history, versions, moments, lists at a moment), one method each.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import {
  type ChangeItem,
  type ChangeRow,
  changeItem,
  diffOf,
  type HistoryItem,
  historyItem,
  type VersionRow,
} from '../../../projections/changes.js';
import { COLLECTION_NAMES, RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import type { EntryRecord } from '../../engine/table.js';
import { Turns } from '../../engine/turns.js';
import type { ChangeQuery, EntryThen } from '../port.js';
import { decodeDiff, WITHOUT_VERSION } from './schema.js';

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

type Row = VersionRecord & { at: string };

/**
 * The stored diff of a version without a snapshot (only a version with one can leave it out), as
 * stored: `[field, before, after]` triples, read without making a member of each.
 */
const storedMembers = (row: Pick<VersionRecord, 'diff'>): [string, unknown, unknown][] => JSON.parse(row.diff!);

/** Folds version rows onto an entry: a snapshot replaces it, a diff sets its `after` values. */
function applyRows(start: Record<string, unknown> | undefined, rows: Row[]): EntryRecord | undefined {
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

/** How many change rows are read per query while a change-log question is answered. */
const PAGE = 500;
/** Rows per query of a list at a moment. */
const LIST_PAGE = 1000;
/** Positions per query of the entries changed between two moments. */
const TOUCHED_RANGE = 10_000;

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

const EVERY_COLLECTION = COLLECTION_NAMES.map((name) => `'${name}'`).join(', ');

function statements(db: Database.Database) {
  return {
    /** An entry's version rows from its last snapshot at or before a revision, up to that revision. */
    fromSnapshot: db.prepare<[{ resource: string; id: number; revision: number }], Row>(
      `SELECT v.revision, v.diff, v.deleted, v.snapshot, c.at
       FROM versions v INDEXED BY versions_entry JOIN changes c ON c.position = v.position
       WHERE v.resource = @resource AND v.entry_id = @id AND v.revision <= @revision AND v.revision >= COALESCE(
         (SELECT MAX(revision) FROM versions INDEXED BY versions_entry
          WHERE resource = @resource AND entry_id = @id AND revision <= @revision AND snapshot IS NOT NULL), 0)
       ORDER BY v.revision`,
    ),
    lastBefore: db.prepare<[string, number, number], { revision: number; deleted: number }>(
      `SELECT revision, deleted FROM versions INDEXED BY versions_entry WHERE resource = ? AND entry_id = ? AND position <= ?
       ORDER BY revision DESC LIMIT 1`,
    ),
    history: db.prepare<[string, number], VersionRecord & ChangeRecord>(
      `SELECT v.resource, v.entry_id, v.revision, v.diff, v.deleted, v.snapshot, c.position, c.type, c.at, c.actor,
              c.request_id, c.data
       FROM versions v INDEXED BY versions_entry JOIN changes c ON c.position = v.position
       WHERE v.resource = ? AND v.entry_id = ? ORDER BY v.revision`,
    ),
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
    rowFrom: db.prepare<[number], { position: number; hw_at: string }>(
      'SELECT position, COALESCE(hw_at, at) AS hw_at FROM changes WHERE position >= ? ORDER BY position LIMIT 1',
    ),
    first: db.prepare<[], { position: number | null }>('SELECT MIN(position) AS position FROM changes'),
    head: db.prepare<[], { position: number | null }>('SELECT MAX(position) AS position FROM changes'),
    timeOf: db.prepare<[number], { at: string }>('SELECT at FROM changes WHERE position = ?'),
    touched: db
      .prepare<[string, number, number], number>(
        'SELECT entry_id FROM versions WHERE resource = ? AND position > ? AND position <= ?',
      )
      .pluck(),
    // Version rows are found by position through their primary key, once per collection: an index by
    // position alone took 19 bytes an event (bench/history.ts, read-model files / the event log).
    versionsIn: db.prepare<[string], VersionRecord>(
      `SELECT * FROM versions WHERE resource IN (${EVERY_COLLECTION}) AND position IN (SELECT value FROM json_each(?))
       ORDER BY position, resource, entry_id`,
    ),
    versionsBetween: db.prepare<[number, number], VersionRecord>(
      `SELECT * FROM versions WHERE resource IN (${EVERY_COLLECTION}) AND position BETWEEN ? AND ?
       ORDER BY position, resource, entry_id`,
    ),
  };
}

/** The change log's questions, answered from the `changes`, `versions` and `list_snapshots` tables (complete ones). */
export class SqliteChanges {
  private readonly sql;

  constructor(private readonly db: Database.Database) {
    this.sql = statements(db);
  }

  history(resource: ResourceName, id: number): HistoryItem[] {
    return this.sql.history.all(resource, id).map((row) => historyItem(toChange(row), toVersion(row)));
  }

  versionOf(resource: ResourceName, id: number, version: number): EntryRecord | undefined {
    const rows = this.sql.fromSnapshot.all({ resource, id, revision: version - 1 });
    const last = rows.at(-1);
    if (!last || last.revision !== version - 1 || last.deleted) return undefined;
    const entry = applyRows(undefined, rows)!;
    return { ...entry, id };
  }

  entryAt(resource: ResourceName, id: number, position: number): EntryThen {
    const last = this.sql.lastBefore.get(resource, id, position);
    if (!last) return undefined;
    if (last.deleted) return { deleted: true };
    const entry = applyRows(undefined, this.sql.fromSnapshot.all({ resource, id, revision: last.revision }))!;
    return { entry: { ...entry, id } };
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

  positionAt(time: string): number {
    const later = this.firstReaching(time, true);
    return later === undefined ? (this.sql.head.get()?.position ?? 0) : later - 1;
  }

  /**
   * The position of the first change row whose `hw_at` is past `time` (`strict`) or at it or past it;
   * undefined if none is. `hw_at` never decreases along the positions (the projector makes it so), so
   * the row is found by bisecting the primary key: about twenty lookups for a million rows, and no
   * index by time to keep up at every write.
   */
  private firstReaching(time: string, strict: boolean): number | undefined {
    const reaches = (position: number) => {
      const row = this.sql.rowFrom.get(position)!;
      return { row, yes: strict ? row.hw_at > time : row.hw_at >= time };
    };
    const first = this.sql.first.get()?.position;
    const last = this.sql.head.get()?.position;
    if (first == null || last == null) return undefined;
    const atLast = reaches(last);
    if (!atLast.yes) return undefined;
    let found = atLast.row;
    // The smallest position whose next row reaches `time`: that row (`found`, the one from `high`).
    let [low, high] = [first, last];
    while (low < high) {
      const middle = low + Math.floor((high - low) / 2);
      const { row, yes } = reaches(middle);
      if (yes) [high, found] = [middle, row];
      else low = row.position + 1; // every position up to that row's leads to it
    }
    return found.position;
  }

  timeOf(position: number): string | undefined {
    return this.sql.timeOf.get(position)?.at;
  }

  /**
   * The entries changed by the events after `from` up to `to`, by resource, each id once: read a
   * range of positions at a time, a slice of TURN_MS at a time (from 0, that is every version row).
   */
  async touched(from: number, to: number): Promise<Map<ResourceName, number[]>> {
    const turns = new Turns();
    const seen = new Map<ResourceName, Set<number>>();
    for (let start = from; start < to; start += TOUCHED_RANGE) {
      for (const resource of RESOURCE_NAMES) {
        const ids = seen.get(resource) ?? new Set<number>();
        for (const id of this.sql.touched.all(resource, start, Math.min(to, start + TOUCHED_RANGE))) ids.add(id);
        if (ids.size > 0) seen.set(resource, ids);
      }
      await turns.pause();
    }
    return new Map([...seen].map(([resource, ids]) => [resource, [...ids].sort((a, b) => a - b)]));
  }

  /**
   * The version rows at some positions: a page of the log whose positions follow one another is read
   * as one range of each collection's rows, a sparse one (a filter) position by position.
   */
  private versionsAt(positions: number[]): VersionRow[] {
    const [low, high] = [Math.min(...positions), Math.max(...positions)];
    if (high - low < 4 * positions.length) {
      const wanted = new Set(positions);
      return this.sql.versionsBetween
        .all(low, high)
        .filter((row) => wanted.has(row.position))
        .map(toVersion);
    }
    return this.sql.versionsIn.all(JSON.stringify(positions)).map(toVersion);
  }

  /** The matching change items, a page of the log per turn of the event loop. */
  async *changes(query: ChangeQuery): AsyncIterable<ChangeItem> {
    const desc = query.order === 'desc';
    let cursor: number | undefined = desc ? query.before : query.after;
    for (let first = true; ; first = false) {
      if (!first) await nextTurn();
      const page = query.resource ? this.entryPage(query, cursor) : this.page(query, cursor);
      if (page.rows.length > 0) {
        const versions = new Map<number, VersionRow[]>();
        for (const version of this.versionsAt(page.rows.map((row) => row.position))) {
          const same = versions.get(version.position);
          if (same) same.push(version);
          else versions.set(version.position, [version]);
        }
        for (const row of page.rows) yield changeItem(toChange(row), versions.get(row.position) ?? []);
      }
      if (page.last === undefined) return;
      cursor = page.last;
    }
  }

  /** The next page of matching change rows after `cursor`; `last` is where the next page starts, if any. */
  private page(query: ChangeQuery, cursor: number | undefined): { rows: ChangeRecord[]; last?: number } {
    const { where, params, order } = this.filters(query, cursor);
    const rows = this.db.prepare(`SELECT * FROM changes c WHERE 1 ${where} ${order}`).all(...params) as ChangeRecord[];
    return { rows, last: rows.length === PAGE ? rows[rows.length - 1].position : undefined };
  }

  /**
   * With a resource (and an id): the changes whose entry, or one of the entries they changed in
   * passing, is that one. The next PAGE candidate positions come from the entry's version rows and
   * from the few change rows whose entry has none (`changes_entry`, a partial index); the other
   * filters then keep some of them, and the next page starts after the last candidate.
   */
  private entryPage(query: ChangeQuery, cursor: number | undefined): { rows: ChangeRecord[]; last?: number } {
    const desc = query.order === 'desc';
    const bound = cursor === undefined ? '' : `AND position ${desc ? '<' : '>'} ?`;
    const order = `ORDER BY position ${desc ? 'DESC' : ''} LIMIT ${PAGE}`;
    const one = query.id !== undefined;
    const entry = one ? 'AND entry_id = ?' : '';
    // One entry's versions come in revision order, which is the log's order.
    const versionOrder = one ? `ORDER BY revision ${desc ? 'DESC' : ''} LIMIT ${PAGE}` : order;
    const versions = `versions ${one ? 'INDEXED BY versions_entry' : ''}`;
    const changes = 'changes INDEXED BY changes_entry';
    const side = (table: string, sideOrder: string, only = '') =>
      `SELECT position FROM ${table} WHERE resource = ? ${entry} ${bound} ${only} ${sideOrder}`;
    const sideParams = [
      query.resource,
      ...(query.id === undefined ? [] : [query.id]),
      ...(cursor === undefined ? [] : [cursor]),
    ];
    const candidates = this.db
      .prepare(
        `SELECT position FROM (${side(versions, versionOrder)}) UNION SELECT position FROM (${side(changes, order, `AND ${WITHOUT_VERSION}`)}) ${order}`,
      )
      .pluck()
      .all(...sideParams, ...sideParams) as number[];
    const { where, params } = this.filters(query, undefined);
    const rows = this.db
      .prepare(
        `SELECT * FROM changes c WHERE position IN (SELECT value FROM json_each(?)) ${where} ORDER BY position ${desc ? 'DESC' : ''}`,
      )
      .all(JSON.stringify(candidates), ...params) as ChangeRecord[];
    return { rows, last: candidates.length === PAGE ? candidates[candidates.length - 1] : undefined };
  }

  /**
   * The conditions on the change row itself, with their bound values, and the order and page size.
   * `since` becomes a bound on the position too (`hw_at` never decreases), merged with the page's
   * cursor into one lower and one upper bound: given two lower bounds on the primary key, SQLite
   * ranges over one and filters the other, which read every row from `since` again for each page.
   */
  private filters(query: ChangeQuery, cursor: number | undefined): { where: string; params: unknown[]; order: string } {
    const clauses: string[] = [];
    const params: unknown[] = [];
    for (const field of ['actor', 'request_id', 'type'] as const) {
      if (query[field] === undefined) continue;
      clauses.push(`AND c.${field} = ?`);
      params.push(query[field]);
    }
    const desc = query.order === 'desc';
    // Positions strictly between `above` and `below`.
    let above = desc || cursor === undefined ? 0 : cursor;
    const below = desc && cursor !== undefined ? cursor : Number.MAX_SAFE_INTEGER;
    if (query.since !== undefined) {
      clauses.push('AND c.at >= ?');
      params.push(query.since);
      above = Math.max(above, (this.firstReaching(query.since, false) ?? Number.MAX_SAFE_INTEGER) - 1);
    }
    if (query.until !== undefined) {
      clauses.push('AND c.at < ?');
      params.push(query.until);
    }
    if (!query.tokens) clauses.push("AND (c.resource IS NULL OR c.resource <> 'tokens')");
    clauses.push('AND c.position > ? AND c.position < ?');
    params.push(above, below);
    return { where: clauses.join(' '), params, order: `ORDER BY c.position ${desc ? 'DESC' : ''} LIMIT ${PAGE}` };
  }
}
