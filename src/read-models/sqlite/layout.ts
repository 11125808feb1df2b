import type BetterSqlite3 from 'better-sqlite3';
import type { BulkStart, ListCount } from './bulk-batches.js';
import { CONSISTENT_AT, type ListSince } from './save-jobs.js';
import { INDEXES, INDEXES_IN_LOG_ORDER, LAYOUT, RETIRED_INDEXES, TABLES } from './schema.js';

/** A read-model file as it is opened: its layout brought up to date, where a rebuild's file resumes, its integrity. */

/**
 * Drops read models of an older layout (the projector refills them from the log) and creates the
 * tables; in one write transaction, so that instances opening one file together agree.
 */
export function upgrade(db: BetterSqlite3.Database, bulk: boolean): void {
  if (db.pragma('user_version', { simple: true }) !== LAYOUT || !resumable(db, bulk)) {
    const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
    for (const { name } of tables.all()) db.exec(`DROP TABLE "${name}"`);
    db.pragma(`user_version = ${LAYOUT}`);
  }
  db.exec(TABLES);
  db.exec(RETIRED_INDEXES);
  db.exec(bulk ? INDEXES_IN_LOG_ORDER : INDEXES);
}

/**
 * A rebuild's file goes on only from a consistent point: its checkpoint is its last one (see
 * CONSISTENT_AT). One whose last commit was elsewhere (written by a build that kept no consistent
 * points) is dropped, and the rebuild starts over.
 */
function resumable(db: BetterSqlite3.Database, bulk: boolean): boolean {
  if (!bulk) return true;
  const kept = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!kept) return true;
  const meta = db.prepare<[string], string>('SELECT value FROM meta WHERE name = ?').pluck();
  const checkpoint = meta.get('checkpoint');
  return checkpoint === undefined || checkpoint === meta.get(CONSISTENT_AT);
}

/**
 * Where a rebuild's file stands: empty, or at the last consistent point of a rebuild that stopped
 * before its end, with the counts that make its list snapshots due.
 */
export function bulkStart(db: BetterSqlite3.Database): BulkStart {
  const present = new Map(
    db.prepare<[], [string, number]>('SELECT resource, count(*) FROM entries GROUP BY resource').raw().all(),
  );
  const lists = new Map<string, ListCount>();
  const counts = db.prepare<[], { name: string; value: string }>(
    "SELECT name, value FROM meta WHERE name LIKE 'list:%'",
  );
  for (const { name, value } of counts.all()) {
    const resource = name.slice('list:'.length);
    lists.set(resource, { ...(JSON.parse(value) as ListSince), present: present.get(resource) ?? 0 });
  }
  return {
    revision: Number(
      db.prepare<[string], string>('SELECT value FROM meta WHERE name = ?').pluck().get('checkpoint') ?? -1,
    ),
    lists,
  };
}

/** What the file's own integrity check finds wrong in its structure (pages, indexes); empty when whole. */
export function integrity(db: BetterSqlite3.Database): string[] {
  try {
    const found = db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
    const problems = found.map((row) => row.integrity_check);
    return problems.length === 1 && problems[0] === 'ok' ? [] : problems;
  } catch (error) {
    return [(error as Error).message];
  }
}
