import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { ChangeItem, ChangeRow, HistoryItem, RequestRow, VersionRow } from '../../../projections/changes.js';
import { COLLECTION_NAMES, type CollectionName, type ResourceName } from '../../domain/resources.js';
import type { EntryRecord } from '../../domain/shared/collection.js';
import { emptyState } from '../../domain/state.js';
import { Checkpointer, FALLBACK_CHECKPOINT_PAGES } from '../../sqlite/checkpointer.js';
import type { ChangeQuery, EntryThen, ProjectionBatch, ReadModelStore, StoredSnapshot } from '../port.js';
import { SqliteAudit } from './audit.js';
import { ListCopies } from './list-copies.js';
import { RowWriter } from './rows.js';
import { INDEXES, LAYOUT, TABLES } from './schema.js';

/** SQLite errors that mean the file cannot be used as read models: it is set aside and rebuilt. */
const DAMAGED = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR)/;

const isDamage = (error: unknown) => DAMAGED.test((error as { code?: string }).code ?? '');

/**
 * A whole-list snapshot of a resource is taken once this many of its version rows came after the
 * last one (at least LIST_SNAPSHOT_MIN, else ten times the size of the list then): a list as it was
 * at any position is one snapshot and at most that many rows, and the snapshots take about a tenth
 * of the room the version rows do.
 */
const LIST_SNAPSHOT_MIN = 1000;
const LIST_SNAPSHOT_FACTOR = 10;

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
    changes: new RowWriter(
      db,
      'INSERT OR IGNORE INTO changes (position, type, at, hw_at, actor, request_id, resource, entry_id, data)',
      9,
    ),
    versions: new RowWriter(
      db,
      'INSERT OR IGNORE INTO versions (resource, entry_id, revision, position, diff, deleted, snapshot)',
      7,
    ),
    request: db.prepare(
      `INSERT OR REPLACE INTO requests (actor, key, fingerprint, response, at, position)
       VALUES (@actor, @key, @fingerprint, @response, @at, @position)`,
    ),
    requestsSince: db.prepare<[string], RequestRow>('SELECT * FROM requests WHERE at >= ?'),
    listSnapshot: db.prepare(
      'INSERT OR IGNORE INTO list_snapshots (resource, position, id, doc) SELECT resource, ?, id, doc FROM entries WHERE resource = ?',
    ),
    listSnapshotDone: db.prepare('INSERT OR IGNORE INTO list_snapshots_done (resource, position) VALUES (?, ?)'),
  };
}

/** The change rows' values, one row after another (one array for the whole batch, no array per row). */
function changeValues(rows: ChangeRow[]): unknown[] {
  const values: unknown[] = [];
  for (const row of rows) {
    values.push(row.position, row.type, row.at, row.hw_at, row.actor, row.request_id);
    values.push(row.resource ?? null, row.entry_id ?? null, JSON.stringify(row.data));
  }
  return values;
}

function versionValues(rows: VersionRow[]): unknown[] {
  const values: unknown[] = [];
  for (const row of rows) {
    values.push(row.resource, row.entry_id, row.revision, row.position, JSON.stringify(row.diff));
    values.push(row.deleted ? 1 : 0, row.snapshot ? JSON.stringify(row.snapshot) : null);
  }
  return values;
}

/** Every table in key order, for `lines()`: name, key columns, value columns. */
const COMPARED: [string, string[], string[]][] = [
  ['meta', ['name'], ['value']],
  ['counters', ['resource'], ['last_id']],
  ['entries', ['resource', 'id'], ['doc']],
  ['tombstones', ['resource', 'id'], ['version', 'created_at']],
  ['changes', ['position'], ['type', 'at', 'hw_at', 'actor', 'request_id', 'resource', 'entry_id', 'data']],
  ['versions', ['resource', 'entry_id', 'revision'], ['position', 'diff', 'deleted', 'snapshot']],
  ['requests', ['actor', 'key'], ['fingerprint', 'at', 'position']],
];

/**
 * Read models in SQLite (`synchronous = NORMAL`: they can always be rebuilt from the log). A file
 * that cannot be opened or read as a database is renamed `<file>.corrupt-<time>` and replaced by an
 * empty one, which the projector then fills from the log; the log is never touched.
 */
export class SqliteReadModelStore implements ReadModelStore {
  private db!: Database.Database;
  private sql!: ReturnType<typeof statements>;
  private auditQueries?: SqliteAudit;
  private checkpointer?: Checkpointer;
  /** List snapshots copied a chunk at a time (a file in use); undefined: copied at once (bulk, memory). */
  private listCopies?: ListCopies;
  /** Lists whose snapshot became due in the save under way, copied once it is committed. */
  private dueLists: [string, number][] = [];

  constructor(
    readonly location: string,
    private readonly onSetAside: (setAsideAs: string, reason: string) => void = () => {},
    /**
     * A new file filled in one go (a rebuild): no journal, no sync, a large cache, and the secondary
     * indexes built once, at the first change-log question or at `close()`, which then turns the
     * journal (WAL) on. Never for a file in use.
     */
    private readonly bulk = false,
  ) {
    this.recovering(() => this.open());
  }

  private open(): void {
    this.db = new Database(this.location);
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma(this.bulk ? 'journal_mode = OFF' : 'journal_mode = WAL');
    this.db.pragma(this.bulk ? 'synchronous = OFF' : 'synchronous = NORMAL');
    if (this.bulk) this.db.pragma('cache_size = -262144');
    this.db.transaction(() => this.upgrade()).immediate();
    this.sql = statements(this.db);
    if (!this.bulk && this.location !== ':memory:') {
      this.db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
      this.checkpointer = new Checkpointer(this.location);
      this.listCopies = new ListCopies(this.location, this.db, (resource, position, size) =>
        this.listTaken(resource, position, size),
      );
    }
    this.auditQueries = undefined;
  }

  /** The change log's questions, prepared on first use: they name indexes a bulk file builds last. */
  private get audit(): SqliteAudit {
    if (!this.auditQueries && this.bulk) this.db.exec(INDEXES);
    this.auditQueries ??= new SqliteAudit(this.db);
    return this.auditQueries;
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
    this.db.exec(TABLES);
    if (!this.bulk) this.db.exec(INDEXES);
  }

  /** Runs `work`; if the file turns out to be damaged, sets it aside, opens an empty one and runs it again. */
  private recovering<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!isDamage(error) || this.location === ':memory:') throw error;
      void this.checkpointer?.stop();
      this.checkpointer = undefined;
      this.listCopies?.close();
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
    const rows = this.db.prepare<[], { resource: CollectionName; doc: string }>('SELECT resource, doc FROM entries');
    for (const row of rows.iterate()) {
      const entry = JSON.parse(row.doc) as EntryRecord;
      state.collections[row.resource].put(entry.id, entry);
    }
    const buried = this.db.prepare<[], { resource: CollectionName; id: number; version: number; created_at: string }>(
      'SELECT resource, id, version, created_at FROM tombstones',
    );
    for (const row of buried.iterate()) state.collections[row.resource].bury(row.id, row);
    const counters = this.db.prepare<[], { resource: CollectionName; last_id: number }>('SELECT * FROM counters').all();
    for (const row of counters) {
      if (COLLECTION_NAMES.includes(row.resource)) state.collections[row.resource].raiseLastId(row.last_id);
    }
    const secretKey = this.meta('secret_key');
    if (secretKey) state.secretKey = JSON.parse(secretKey);
    state.revision = Number(this.meta('checkpoint') ?? -1);
    return { state, digest: this.meta('checkpoint_digest'), highWaterAt: this.meta('high_water_at') };
  }

  save(batch: ProjectionBatch): void {
    this.dueLists = [];
    this.db
      .transaction(() => {
        // Another instance sharing this store got there first, with the same fold.
        if (Number(this.meta('checkpoint') ?? -1) >= batch.revision) return;
        this.saveEntries(batch);
        this.sql.changes.write(changeValues(batch.changes));
        this.sql.versions.write(versionValues(batch.versions));
        for (const row of batch.requests) this.sql.request.run(row);
        this.snapshotLists(batch.versions, batch.revision + 1);
        if (batch.secretKey) this.sql.setMeta.run('secret_key', JSON.stringify(batch.secretKey));
        this.sql.setMeta.run('checkpoint', String(batch.revision));
        this.sql.setMeta.run('checkpoint_digest', batch.digest);
        this.sql.setMeta.run('high_water_at', batch.highWaterAt);
      })
      .immediate();
    for (const [resource, position] of this.dueLists) this.listCopies!.start(resource, position);
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

  /**
   * Copies a resource's whole list once enough of its versions came since the last copy: a chunk at
   * a time after this save (ListCopies), or at once in a file filled in bulk or in memory.
   */
  private snapshotLists(versions: VersionRow[], position: number): void {
    const counts = new Map<string, number>();
    for (const row of versions) counts.set(row.resource, (counts.get(row.resource) ?? 0) + 1);
    for (const [resource, count] of counts) {
      const since = this.listSince(resource);
      const rows = since.rows + count;
      const due = rows >= Math.max(LIST_SNAPSHOT_MIN, LIST_SNAPSHOT_FACTOR * since.size);
      if (!due || this.listCopies?.busy(resource)) {
        this.setListSince(resource, { rows, size: since.size });
        continue;
      }
      this.setListSince(resource, { rows: 0, size: since.size });
      if (this.listCopies) this.dueLists.push([resource, position]);
      else this.listTaken(resource, position, this.sql.listSnapshot.run(position, resource).changes);
    }
  }

  /** Version rows of `resource` since its last list snapshot was taken, and the size of that list. */
  private listSince(resource: string): { rows: number; size: number } {
    return JSON.parse(this.meta(`list:${resource}`) ?? '{"rows":0,"size":0}');
  }

  private setListSince(resource: string, since: { rows: number; size: number }): void {
    this.sql.setMeta.run(`list:${resource}`, JSON.stringify(since));
  }

  /**
   * A list snapshot whole at `position` (copied at once, or by the last chunk's transaction): it
   * counts from now on, and its size sets when the next one is due.
   */
  private listTaken(resource: string, position: number, size: number): void {
    this.sql.listSnapshotDone.run(resource, position);
    this.setListSince(resource, { rows: this.listSince(resource).rows, size });
  }

  requestsSince(at: string): Iterable<RequestRow> {
    return this.sql.requestsSince.iterate(at);
  }

  history(resource: ResourceName, id: number): HistoryItem[] {
    return this.audit.history(resource, id);
  }

  changes(query: ChangeQuery): Iterable<ChangeItem> {
    return this.audit.changes(query);
  }

  versionOf(resource: ResourceName, id: number, version: number): EntryRecord | undefined {
    return this.audit.versionOf(resource, id, version);
  }

  entryAt(resource: ResourceName, id: number, position: number): EntryThen {
    return this.audit.entryAt(resource, id, position);
  }

  listAt(resource: ResourceName, position: number): EntryRecord[] {
    return this.audit.listAt(resource, position);
  }

  positionAt(time: string): number {
    return this.audit.positionAt(time);
  }

  timeOf(position: number): string | undefined {
    return this.audit.timeOf(position);
  }

  touched(from: number, to: number): { resource: ResourceName; id: number }[] {
    return this.audit.touched(from, to);
  }

  /**
   * The list snapshots' own bookkeeping (`list:*` in meta) is left out: where the snapshots fall
   * depends on how the events were batched. `listSnapshots` gives them for a check by content.
   */
  *lines(): Iterable<{ table: string; key: string; value: string }> {
    for (const [table, keys, values] of COMPARED) {
      const columns = [...keys, ...values].join(', ');
      const query = this.db.prepare(`SELECT ${columns} FROM ${table} ORDER BY ${keys.join(', ')}`);
      for (const row of query.iterate() as Iterable<Record<string, unknown>>) {
        const key = keys.map((k) => row[k]).join('/');
        if (table === 'meta' && key.startsWith('list:')) continue;
        yield { table, key, value: JSON.stringify(values.map((v) => row[v])) };
      }
    }
  }

  *listSnapshots(): Iterable<{ resource: ResourceName; position: number; entries: EntryRecord[] }> {
    const taken = this.db.prepare<[], { resource: ResourceName; position: number }>(
      'SELECT resource, position FROM list_snapshots_done ORDER BY resource, position',
    );
    const docs = this.db.prepare<[string, number], string>(
      'SELECT doc FROM list_snapshots WHERE resource = ? AND position = ? ORDER BY id',
    );
    for (const { resource, position } of taken.all()) {
      yield {
        resource,
        position,
        entries: docs
          .pluck()
          .all(resource, position)
          .map((doc) => JSON.parse(doc)),
      };
    }
  }

  close(): void {
    if (!this.db.open) return;
    this.listCopies?.close();
    void this.checkpointer?.stop();
    this.checkpointer = undefined;
    if (this.bulk) {
      this.db.exec(INDEXES);
      this.db.pragma('journal_mode = WAL');
    }
    this.db.close();
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
