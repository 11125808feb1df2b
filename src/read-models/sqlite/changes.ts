import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import {
  type ChangeItem,
  changeItem,
  type HistoryItem,
  historyItem,
  type VersionRow,
} from '../../../projections/changes.js';
import { ADMIN_COLLECTIONS, COLLECTION_NAMES, RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import type { EntryRecord } from '../../engine/table.js';
import { Turns } from '../../engine/turns.js';
import type { ChangeQuery, EntryThen } from '../port.js';
import { SqliteMoments } from './moments.js';
import { applyRows, type ChangeRecord, type Row, toChange, toVersion, type VersionRecord } from './records.js';
import { WITHOUT_VERSION } from './schema.js';

/** The collections whose changes only admins see, as a list of SQL strings (names of the declarations'). */
const ADMIN_ONLY = ADMIN_COLLECTIONS.map((name) => `'${name}'`).join(', ');

/** How many change rows are read per query while a change-log question is answered. */
const PAGE = 500;
/** Positions per query of the entries changed between two moments. */
const TOUCHED_RANGE = 10_000;

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
  private readonly moments: SqliteMoments;

  constructor(private readonly db: Database.Database) {
    this.sql = statements(db);
    this.moments = new SqliteMoments(db, (resource, id, position) => this.entryAt(resource, id, position));
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

  /** Every entry of a resource as it was at a position (see SqliteMoments.listAt). */
  listAt(resource: ResourceName, position: number): Promise<EntryRecord[]> {
    return this.moments.listAt(resource, position);
  }

  /** The net change of some entries between two positions (see SqliteMoments.netChanges). */
  netChanges(
    resource: ResourceName,
    ids: number[],
    from: number,
    to: number,
  ): Promise<{ before: Map<number, EntryRecord>; after: Map<number, EntryRecord> }> {
    return this.moments.netChanges(resource, ids, from, to);
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
   * from the few change rows whose entry has none (`changes_named`, a partial index); the other
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
    const changes = 'changes INDEXED BY changes_named';
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
    if (!query.admin) clauses.push(`AND (c.resource IS NULL OR c.resource NOT IN (${ADMIN_ONLY}))`);
    clauses.push('AND c.position > ? AND c.position < ?');
    params.push(above, below);
    return { where: clauses.join(' '), params, order: `ORDER BY c.position ${desc ? 'DESC' : ''} LIMIT ${PAGE}` };
  }
}
