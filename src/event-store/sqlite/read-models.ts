import { existsSync, renameSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { HistoryItem, HistoryRow } from '../../../projections/history.js';
import type { ProjectionBatch, ReadModelSnapshot, ReadModelStore } from '../../application/read-models.js';
import { type Collection, type EntryMeta, RESOURCES, type Resource } from '../../domain/shared/types.js';
import { type AnyEntry, emptyState } from '../../domain/state.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (resource TEXT NOT NULL, id INTEGER NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (resource, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tombstones (resource TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (resource, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (resource TEXT PRIMARY KEY, last_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS history (
  resource TEXT NOT NULL, entry_id INTEGER NOT NULL, revision INTEGER NOT NULL, position INTEGER NOT NULL,
  type TEXT NOT NULL, at TEXT NOT NULL, actor TEXT NOT NULL, request_id TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (resource, entry_id, revision)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoint (name TEXT PRIMARY KEY, revision INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS facts (name TEXT PRIMARY KEY, value TEXT NOT NULL);`;

interface HistoryRecord extends Omit<HistoryRow, 'data'> {
  data: string;
}

const toItem = ({ position, revision, type, at, actor, request_id, data }: HistoryRecord): HistoryItem => ({
  position,
  revision,
  type,
  at,
  actor,
  request_id,
  data: JSON.parse(data),
});

/** SQLite errors that mean the file cannot be used as read models: it is set aside and rebuilt. */
const DAMAGED = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR)/;

const isDamage = (error: unknown) => DAMAGED.test((error as { code?: string }).code ?? '');

function statements(db: Database.Database) {
  return {
    checkpoint: db.prepare<[], { revision: number }>("SELECT revision FROM checkpoint WHERE name = 'config'"),
    setCheckpoint: db.prepare("INSERT OR REPLACE INTO checkpoint (name, revision) VALUES ('config', ?)"),
    fact: db.prepare<[string], { value: string }>('SELECT value FROM facts WHERE name = ?'),
    setFact: db.prepare('INSERT OR REPLACE INTO facts (name, value) VALUES (?, ?)'),
    upsert: db.prepare('INSERT OR REPLACE INTO entries (resource, id, doc) VALUES (?, ?, ?)'),
    remove: db.prepare('DELETE FROM entries WHERE resource = ? AND id = ?'),
    tombstone: db.prepare('INSERT OR IGNORE INTO tombstones (resource, id) VALUES (?, ?)'),
    counter: db.prepare(
      'INSERT INTO counters (resource, last_id) VALUES (?, ?) ON CONFLICT (resource) DO UPDATE SET last_id = MAX(last_id, excluded.last_id)',
    ),
    addHistory: db.prepare(
      `INSERT OR IGNORE INTO history (resource, entry_id, revision, position, type, at, actor, request_id, data)
         VALUES (@resource, @entry_id, @revision, @position, @type, @at, @actor, @request_id, @data)`,
    ),
    history: db.prepare<[string, number], HistoryRecord>(
      'SELECT * FROM history WHERE resource = ? AND entry_id = ? ORDER BY revision',
    ),
  };
}

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
    this.db.exec(SCHEMA);
    this.sql = statements(this.db);
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

  private revision(): number {
    return this.sql.checkpoint.get()?.revision ?? -1;
  }

  load(): ReadModelSnapshot {
    return this.recovering(() => this.read());
  }

  private read(): ReadModelSnapshot {
    const state = emptyState();
    const col = (resource: string) => state[resource as Resource] as Collection<EntryMeta>;
    for (const row of this.db
      .prepare<[], { resource: string; doc: string }>('SELECT resource, doc FROM entries ORDER BY resource, id')
      .all()) {
      const entry = JSON.parse(row.doc) as AnyEntry;
      col(row.resource).entries.set(entry.id, entry);
    }
    for (const row of this.db
      .prepare<[], { resource: string; id: number }>('SELECT resource, id FROM tombstones')
      .all()) {
      col(row.resource).deleted.add(row.id);
    }
    for (const row of this.db
      .prepare<[], { resource: string; last_id: number }>('SELECT resource, last_id FROM counters')
      .all()) {
      col(row.resource).lastId = row.last_id;
    }
    const secretKey = this.sql.fact.get('secret_key')?.value;
    if (secretKey) state.secretKey = JSON.parse(secretKey);
    return { state, revision: this.revision(), digest: this.sql.fact.get('checkpoint_digest')?.value };
  }

  save(batch: ProjectionBatch): void {
    this.db
      .transaction(() => {
        if (this.revision() >= batch.revision) return; // another instance got there first, with the same fold
        for (const change of batch.entries) {
          if (change.entry) this.sql.upsert.run(change.resource, change.id, JSON.stringify(change.entry));
          else {
            this.sql.remove.run(change.resource, change.id);
            this.sql.tombstone.run(change.resource, change.id);
          }
        }
        for (const [resource, lastId] of Object.entries(batch.lastIds)) this.sql.counter.run(resource, lastId);
        for (const row of batch.history) this.sql.addHistory.run({ ...row, data: JSON.stringify(row.data) });
        if (batch.secretKey) this.sql.setFact.run('secret_key', JSON.stringify(batch.secretKey));
        this.sql.setFact.run('checkpoint_digest', batch.digest);
        this.sql.setCheckpoint.run(batch.revision);
      })
      .immediate();
  }

  history(resource: Resource, id: number): HistoryItem[] {
    return this.sql.history.all(resource, id).map(toItem);
  }

  dump(): { snapshot: ReadModelSnapshot; history: HistoryRow[] } {
    return this.recovering(() => this.readAll());
  }

  private readAll(): { snapshot: ReadModelSnapshot; history: HistoryRow[] } {
    const rows = this.db
      .prepare<[], HistoryRecord>('SELECT * FROM history ORDER BY position, resource, entry_id')
      .all();
    return { snapshot: this.read(), history: rows.map((row) => ({ ...row, data: JSON.parse(row.data) })) };
  }

  replace(snapshot: ReadModelSnapshot, history: HistoryRow[]): void {
    this.db
      .transaction(() => {
        for (const table of ['entries', 'tombstones', 'counters', 'history', 'checkpoint', 'facts'])
          this.db.exec(`DELETE FROM ${table}`);
        const col = (resource: Resource) => snapshot.state[resource] as Collection<AnyEntry>;
        const entries = RESOURCES.flatMap((resource) =>
          [...col(resource).entries.values()].map((entry) => ({ resource, id: entry.id, entry })),
        );
        const tombstones = RESOURCES.flatMap((resource) => [...col(resource).deleted].map((id) => ({ resource, id })));
        const lastIds = Object.fromEntries(RESOURCES.map((resource) => [resource, col(resource).lastId]));
        this.sql.setCheckpoint.run(-1);
        const batch = { revision: snapshot.revision, entries: [...entries, ...tombstones], lastIds, history };
        if (snapshot.revision >= 0)
          this.save({ ...batch, digest: snapshot.digest ?? '', secretKey: snapshot.state.secretKey });
      })
      .immediate();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
