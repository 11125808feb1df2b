import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import {
  type ChangeRow,
  type DiffMember,
  type HistoryItem,
  historyItem,
  type VersionRow,
} from '../../../projections/changes.js';
import { RESOURCE_NAMES, type ResourceName } from '../../domain/resources.js';
import type { EntryRecord } from '../../domain/shared/collection.js';
import { emptyState } from '../../domain/state.js';
import type { ProjectionBatch, ReadModelStore, StoredSnapshot } from '../port.js';

/** Raised when the layout of the tables changes: older read models are dropped and rebuilt from the log. */
const LAYOUT = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (resource TEXT NOT NULL, id INTEGER NOT NULL, doc TEXT NOT NULL,
  PRIMARY KEY (resource, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tombstones (resource TEXT NOT NULL, id INTEGER NOT NULL, version INTEGER NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY (resource, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (resource TEXT PRIMARY KEY, last_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS changes (position INTEGER PRIMARY KEY, type TEXT NOT NULL, at TEXT NOT NULL,
  actor TEXT NOT NULL, request_id TEXT NOT NULL, resource TEXT, entry_id INTEGER, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (resource TEXT NOT NULL, entry_id INTEGER NOT NULL, revision INTEGER NOT NULL,
  position INTEGER NOT NULL, diff TEXT NOT NULL, deleted INTEGER NOT NULL, snapshot TEXT,
  PRIMARY KEY (resource, entry_id, revision)) WITHOUT ROWID;`;

/** SQLite errors that mean the file cannot be used as read models: it is set aside and rebuilt. */
const DAMAGED = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR)/;

const isDamage = (error: unknown) => DAMAGED.test((error as { code?: string }).code ?? '');

interface ChangeRecord extends Omit<ChangeRow, 'data'> {
  data: string;
}
interface VersionRecord extends Omit<VersionRow, 'diff' | 'snapshot' | 'deleted'> {
  diff: string;
  deleted: number;
  snapshot: string | null;
}

const toChange = (row: ChangeRecord): ChangeRow => ({ ...row, data: JSON.parse(row.data) });
const toVersion = ({ snapshot, deleted, ...row }: VersionRecord): VersionRow => ({
  ...row,
  diff: JSON.parse(row.diff),
  ...(deleted ? { deleted: true } : {}),
  ...(snapshot ? { snapshot: JSON.parse(snapshot) } : {}),
});

function statements(db: Database.Database) {
  return {
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
    setMeta: db.prepare('INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)'),
    upsert: db.prepare('INSERT OR REPLACE INTO entries (resource, id, doc) VALUES (?, ?, ?)'),
    remove: db.prepare('DELETE FROM entries WHERE resource = ? AND id = ?'),
    bury: db.prepare('INSERT OR REPLACE INTO tombstones (resource, id, version, created_at) VALUES (?, ?, ?, ?)'),
    unbury: db.prepare('DELETE FROM tombstones WHERE resource = ? AND id = ?'),
    counter: db.prepare(
      `INSERT INTO counters (resource, last_id) VALUES (?, ?)
       ON CONFLICT (resource) DO UPDATE SET last_id = MAX(last_id, excluded.last_id)`,
    ),
    change: db.prepare(
      `INSERT OR IGNORE INTO changes (position, type, at, actor, request_id, resource, entry_id, data)
       VALUES (@position, @type, @at, @actor, @request_id, @resource, @entry_id, @data)`,
    ),
    version: db.prepare(
      `INSERT OR IGNORE INTO versions (resource, entry_id, revision, position, diff, deleted, snapshot)
       VALUES (@resource, @entry_id, @revision, @position, @diff, @deleted, @snapshot)`,
    ),
    /** An entry's version rows from its last snapshot at or before a revision, up to that revision. */
    fromSnapshot: db.prepare<[string, number, number], VersionRecord & { at: string }>(
      `SELECT v.revision, v.diff, v.deleted, v.snapshot, c.at
       FROM versions v JOIN changes c ON c.position = v.position
       WHERE v.resource = ?1 AND v.entry_id = ?2 AND v.revision <= ?3 AND v.revision >= COALESCE(
         (SELECT MAX(revision) FROM versions WHERE resource = ?1 AND entry_id = ?2 AND revision <= ?3
            AND snapshot IS NOT NULL), 0)
       ORDER BY v.revision`,
    ),
    history: db.prepare<[string, number], VersionRecord & ChangeRecord>(
      `SELECT v.resource, v.entry_id, v.revision, v.diff, v.deleted, v.snapshot, c.position, c.type, c.at, c.actor,
              c.request_id, c.data
       FROM versions v JOIN changes c ON c.position = v.position
       WHERE v.resource = ? AND v.entry_id = ? ORDER BY v.revision`,
    ),
  };
}

/** An entry from its last snapshot and the diffs after it; its version is one past the last row's revision. */
function rebuildEntry(id: number, rows: (VersionRecord & { at: string })[]): EntryRecord {
  let entry: Record<string, unknown> = {};
  let createdAt = '';
  for (const row of rows) {
    if (row.snapshot) entry = JSON.parse(row.snapshot);
    else if (row.deleted) entry = {};
    else for (const member of JSON.parse(row.diff) as DiffMember[]) entry[member.field] = member.after;
    createdAt = (entry.created_at as string | undefined) ?? createdAt;
  }
  const last = rows[rows.length - 1];
  return { ...entry, id, version: last.revision + 1, created_at: createdAt, updated_at: last.at } as EntryRecord;
}

/** Every table in key order, for `lines()`: name, key columns, value columns. */
const TABLES: [string, string[], string[]][] = [
  ['meta', ['name'], ['value']],
  ['counters', ['resource'], ['last_id']],
  ['entries', ['resource', 'id'], ['doc']],
  ['tombstones', ['resource', 'id'], ['version', 'created_at']],
  ['changes', ['position'], ['type', 'at', 'actor', 'request_id', 'resource', 'entry_id', 'data']],
  ['versions', ['resource', 'entry_id', 'revision'], ['position', 'diff', 'deleted', 'snapshot']],
];

/**
 * Read models in SQLite (`synchronous = NORMAL`: they can always be rebuilt from the log). A file
 * that cannot be opened or read as a database is renamed `<file>.corrupt-<time>` and replaced by an
 * empty one, which the projector then fills from the log; the log is never touched.
 */
export class SqliteReadModelStore implements ReadModelStore {
  private db!: Database.Database;
  private sql!: ReturnType<typeof statements>;

  constructor(
    readonly location: string,
    private readonly onSetAside: (setAsideAs: string, reason: string) => void = () => {},
  ) {
    this.recovering(() => this.open());
  }

  private open(): void {
    this.db = new Database(this.location);
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.transaction(() => this.upgrade()).immediate();
    this.sql = statements(this.db);
  }

  /**
   * Drops read models of an older layout (the projector refills them from the log) and creates the
   * tables; in one write transaction, so that instances opening one file together agree.
   */
  private upgrade(): void {
    if (this.db.pragma('user_version', { simple: true }) !== LAYOUT) {
      const tables = this.db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
      for (const { name } of tables.all()) this.db.exec(`DROP TABLE "${name}"`);
      this.db.pragma(`user_version = ${LAYOUT}`);
    }
    this.db.exec(SCHEMA);
  }

  /** Runs `work`; if the file turns out to be damaged, sets it aside, opens an empty one and runs it again. */
  private recovering<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!isDamage(error) || this.location === ':memory:') throw error;
      if (this.db?.open) this.db.close();
      const setAsideAs = `${this.location}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(this.location + suffix)) renameSync(this.location + suffix, setAsideAs + suffix);
      }
      this.onSetAside(setAsideAs, (error as Error).message);
      this.open();
      return work();
    }
  }

  private meta(name: string): string | undefined {
    return this.sql.meta.get(name)?.value;
  }

  load(): StoredSnapshot {
    return this.recovering(() => this.read());
  }

  private read(): StoredSnapshot {
    const state = emptyState();
    const rows = this.db.prepare<[], { resource: ResourceName; doc: string }>('SELECT resource, doc FROM entries');
    for (const row of rows.iterate()) {
      const entry = JSON.parse(row.doc) as EntryRecord;
      state.collections[row.resource].put(entry.id, entry);
    }
    const buried = this.db.prepare<[], { resource: ResourceName; id: number; version: number; created_at: string }>(
      'SELECT resource, id, version, created_at FROM tombstones',
    );
    for (const row of buried.iterate()) state.collections[row.resource].bury(row.id, row);
    const counters = this.db.prepare<[], { resource: ResourceName; last_id: number }>('SELECT * FROM counters').all();
    for (const row of counters)
      if (RESOURCE_NAMES.includes(row.resource)) state.collections[row.resource].raiseLastId(row.last_id);
    const secretKey = this.meta('secret_key');
    if (secretKey) state.secretKey = JSON.parse(secretKey);
    state.revision = Number(this.meta('checkpoint') ?? -1);
    return { state, digest: this.meta('checkpoint_digest') };
  }

  save(batch: ProjectionBatch): void {
    this.db
      .transaction(() => {
        // Another instance sharing this store got there first, with the same fold.
        if (Number(this.meta('checkpoint') ?? -1) >= batch.revision) return;
        this.saveEntries(batch);
        for (const row of batch.changes)
          this.sql.change.run({ resource: null, entry_id: null, ...row, data: JSON.stringify(row.data) });
        for (const row of batch.versions) {
          const snapshot = row.snapshot ? JSON.stringify(row.snapshot) : null;
          this.sql.version.run({ ...row, diff: JSON.stringify(row.diff), deleted: row.deleted ? 1 : 0, snapshot });
        }
        if (batch.secretKey) this.sql.setMeta.run('secret_key', JSON.stringify(batch.secretKey));
        this.sql.setMeta.run('checkpoint', String(batch.revision));
        this.sql.setMeta.run('checkpoint_digest', batch.digest);
      })
      .immediate();
  }

  private saveEntries(batch: ProjectionBatch): void {
    for (const { resource, id, entry, tombstone } of batch.entries) {
      if (entry) {
        this.sql.upsert.run(resource, id, JSON.stringify(entry));
        this.sql.unbury.run(resource, id);
      } else {
        this.sql.remove.run(resource, id);
        if (tombstone) this.sql.bury.run(resource, id, tombstone.version, tombstone.created_at);
      }
    }
    for (const [resource, lastId] of Object.entries(batch.lastIds)) this.sql.counter.run(resource, lastId);
  }

  history(resource: ResourceName, id: number): HistoryItem[] {
    return this.sql.history.all(resource, id).map((row) => historyItem(toChange(row), toVersion(row)));
  }

  versionOf(resource: ResourceName, id: number, version: number): EntryRecord | undefined {
    const rows = this.sql.fromSnapshot.all(resource, id, version - 1);
    const last = rows.at(-1);
    if (!last || last.revision !== version - 1 || last.deleted) return undefined;
    return rebuildEntry(id, rows);
  }

  *lines(): Iterable<{ table: string; key: string; value: string }> {
    for (const [table, keys, values] of TABLES) {
      const query = this.db.prepare(
        `SELECT ${[...keys, ...values].join(', ')} FROM ${table} ORDER BY ${keys.join(', ')}`,
      );
      for (const row of query.iterate() as Iterable<Record<string, unknown>>) {
        yield {
          table,
          key: keys.map((k) => row[k]).join('/'),
          value: JSON.stringify(values.map((v) => row[v])),
        };
      }
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Deletes a closed read-model file with its WAL files. */
  static remove(file: string): void {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  }

  /** Puts the closed read models of `from` in place of those of `to`, which must be closed too. */
  static move(from: string, to: string): void {
    SqliteReadModelStore.remove(to);
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
  }
}
