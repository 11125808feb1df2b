// Over 300 lines: the read-model store is one class: open, save, answer, and set a damaged file aside.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import type { ChangeItem, HistoryItem, RequestRow } from '../../../projections/changes.js';
import { COLLECTION_NAMES, type CollectionName, type ResourceName } from '../../domain/resources.js';
import { emptyState } from '../../domain/state.js';
import { Frontier, type NodeReader, nodeHash } from '../../engine/merkle.js';
import type { EntryRecord } from '../../engine/table.js';
import Database from '../../sqlite/driver.js';
import {
  type ChangeQuery,
  type EntryThen,
  type ProjectionBatch,
  type ReadModelStore,
  ReadModelsRebuilding,
  type StoredSnapshot,
} from '../port.js';
import { BulkBatches, type BulkStart, type ListCount } from './bulk-batches.js';
import { SqliteChanges } from './changes.js';
import { SaveThread } from './save-thread.js';
import { CONSISTENT_AT, encode, type ListSince, SaveQueue, Saver } from './saving.js';
import { INDEXES, INDEXES_IN_LOG_ORDER, LAYOUT, RETIRED_INDEXES, storedLevel, TABLES } from './schema.js';

/** SQLite errors that mean the file cannot be used as read models: it is set aside and rebuilt. */
const DAMAGED = /^SQLITE_(NOTADB|CORRUPT|CANTOPEN|IOERR)/;
/** Those of them that show damage once the file was opened and read (an I/O error may pass). */
const DAMAGED_IN_USE = /^SQLITE_(NOTADB|CORRUPT)/;

const codeOf = (error: unknown) => (error as { code?: string }).code ?? '';
const isDamage = (error: unknown) => DAMAGED.test(codeOf(error));
const isDamageInUse = (error: unknown) => DAMAGED_IN_USE.test(codeOf(error));

/** The file a path names, to tell whether another process has set it aside since it was opened. */
const identity = (path: string) => {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
};

function statements(db: BetterSqlite3.Database) {
  return {
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
    requestsSince: db.prepare<[string], RequestRow>('SELECT * FROM requests WHERE at >= ?'),
  };
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
  ['log_nodes', ['level', 'idx'], ['hex(hash)']],
];

/**
 * The nodes of the verifiable log's tree as the file keeps them: a level that is not kept
 * (storedLevel) is made from the one below it, down to the leaves, which `leaf` gives (their hashes,
 * made from the log's events: the file keeps none).
 */
export function treeReader(db: BetterSqlite3.Database, leaf: (index: number) => Buffer): NodeReader {
  const stored = db.prepare<[number, number], Buffer>('SELECT hash FROM log_nodes WHERE level = ? AND idx = ?').pluck();
  const node: NodeReader = (level, index) => {
    if (level === 0) return leaf(index);
    if (!storedLevel(level)) return nodeHash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1));
    const hash = stored.get(level, index);
    if (!hash) throw new Error(`the read models hold no node ${level}/${index} of the log's tree`);
    return hash;
  };
  return node;
}

/** Beside the read models, a finished rebuild waiting for the serving instance to take it in. */
export const REBUILT = '.rebuilt';
/** The reason told to `onDamage` listeners when a finished rebuild is waiting (not damage). */
export const REBUILT_WAITING = 'a rebuild of the read models (replay --apply) is waiting to be taken in';

/**
 * Read models in SQLite (`synchronous = NORMAL`: they can always be rebuilt from the log). A file
 * that cannot be opened or read as a database is renamed `<file>.corrupt-<time>` and replaced by an
 * empty one, which the projector then fills from the log; the log is never touched. Damage found
 * later, by a question or a save (SQLITE_CORRUPT, SQLITE_NOTADB), or the file set aside by another
 * instance, is told to `onDamage` listeners, and every question is answered ReadModelsRebuilding
 * until the rebuild (see ConfigService.repair) is saved. A finished rebuild left beside the file
 * (`<file>.rebuilt`, by `replay --apply` beside a serving instance) is taken in the same way: at the
 * next question the file is closed, replaced, opened again and caught up with the log from the
 * rebuild's position; at a start, it is taken in before the file is opened.
 */
export class SqliteReadModelStore implements ReadModelStore {
  private db!: BetterSqlite3.Database;
  private sql!: ReturnType<typeof statements>;
  private changeQueries?: SqliteChanges;
  /** Saves from a worker thread (a file in use), or on this connection (bulk, memory): see open(). */
  private saving!: SaveThread | SaveQueue;
  /** A file filled in bulk holds the entries back until they are needed (see BulkBatches). */
  private bulkBatches?: BulkBatches;
  /** Told of every failed save (the store tries it again): the last callback `save` was given. */
  private failed: (error: Error) => void = () => {};
  /** The file opened (device and inode): another instance that found it damaged renames it. */
  private opened?: string;
  private readonly damageListeners: ((reason: string) => void)[] = [];
  /** Damage was found and not yet repaired: questions are refused. */
  private damaged = false;

  constructor(
    readonly location: string,
    private readonly onSetAside: (setAsideAs: string, reason: string) => void = () => {},
    /**
     * A file filled in one go (a rebuild): not synced, a large cache, a transaction from one
     * consistent point to the next (BulkBatches), and the secondary indexes built once, at the first
     * change-log question or at `close()`. Opened where a rebuild stopped, it goes on from its last
     * consistent point. Never for a file in use.
     */
    private readonly bulk = false,
    /** How long the worker holds a save for the next ones (see SAVE_HOLD_MS). */
    private readonly saveHoldMs?: number,
  ) {
    this.recovering(() => this.open());
  }

  private open(): void {
    if (this.inUse && existsSync(this.location + REBUILT))
      SqliteReadModelStore.move(this.location + REBUILT, this.location);
    this.db = new Database(this.location);
    this.db.pragma('busy_timeout = 5000');
    // A rebuild's file has its journal too: killed at any moment, it holds its last consistent point
    // (see BulkBatches), which the next rebuild resumes. Not synced: a file lost to a power cut is
    // rebuilt again.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(this.bulk ? 'synchronous = OFF' : 'synchronous = NORMAL');
    // A file in use reads its pages through a 64 MiB cache (bench/history.ts: one server's history,
    // a month's differences, on 10,000,000 events); the default 2 MiB read most of them again.
    this.db.pragma(this.bulk ? 'cache_size = -262144' : 'cache_size = -65536');
    this.db.transaction(() => this.upgrade()).immediate();
    this.sql = statements(this.db);
    this.opened = this.inUse ? identity(this.location) : undefined;
    const failed = (error: Error) => {
      if (isDamageInUse(error)) this.noticeDamage(error.message);
      this.failed(error);
    };
    const here = () => new SaveQueue(new Saver(this.db, this.inUse ? this.location : undefined, this.bulk), failed);
    this.saving =
      this.location === ':memory:' ? here() : new SaveThread(this.location, failed, here, this.bulk, this.saveHoldMs);
    const saving = this.saving;
    this.bulkBatches = this.bulk ? new BulkBatches((job) => saving.save(job), this.bulkStart()) : undefined;
    this.changeQueries = undefined;
  }

  /**
   * Where a rebuild's file stands: empty, or at the last consistent point of a rebuild that stopped
   * before its end, with the counts that make its list snapshots due.
   */
  private bulkStart(): BulkStart {
    const present = new Map(
      this.db.prepare<[], [string, number]>('SELECT resource, count(*) FROM entries GROUP BY resource').raw().all(),
    );
    const lists = new Map<string, ListCount>();
    const counts = this.db.prepare<[], { name: string; value: string }>(
      "SELECT name, value FROM meta WHERE name LIKE 'list:%'",
    );
    for (const { name, value } of counts.all()) {
      const resource = name.slice('list:'.length);
      lists.set(resource, { ...(JSON.parse(value) as ListSince), present: present.get(resource) ?? 0 });
    }
    return { revision: Number(this.meta('checkpoint') ?? -1), lists };
  }

  /** A file that serves while it is written: list snapshots copied a chunk at a time (ListCopies). */
  private get inUse(): boolean {
    return !this.bulk && this.location !== ':memory:';
  }

  /** The change log's questions, prepared on first use: they name indexes a bulk file builds last. */
  private get questions(): SqliteChanges {
    if (!this.changeQueries && this.bulk) {
      this.settle();
      this.db.exec(INDEXES);
    }
    this.changeQueries ??= new SqliteChanges(this.db);
    return this.changeQueries;
  }

  /**
   * Drops read models of an older layout (the projector refills them from the log) and creates the
   * tables; in one write transaction, so that instances opening one file together agree.
   */
  private upgrade(): void {
    if (this.db.pragma('user_version', { simple: true }) !== LAYOUT || !this.resumable()) {
      const tables = this.db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
      for (const { name } of tables.all()) this.db.exec(`DROP TABLE "${name}"`);
      this.db.pragma(`user_version = ${LAYOUT}`);
    }
    this.db.exec(TABLES);
    this.db.exec(RETIRED_INDEXES);
    this.db.exec(this.bulk ? INDEXES_IN_LOG_ORDER : INDEXES);
  }

  /**
   * A rebuild's file goes on only from a consistent point: its checkpoint is its last one (see
   * CONSISTENT_AT). One whose last commit was elsewhere (written by a build that kept no consistent
   * points) is dropped, and the rebuild starts over.
   */
  private resumable(): boolean {
    if (!this.bulk) return true;
    const kept = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
    if (!kept) return true;
    const meta = this.db.prepare<[string], string>('SELECT value FROM meta WHERE name = ?').pluck();
    const checkpoint = meta.get('checkpoint');
    return checkpoint === undefined || checkpoint === meta.get(CONSISTENT_AT);
  }

  /** Runs `work`; if the file turns out to be damaged, sets it aside, opens an empty one and runs it again. */
  private recovering<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!isDamage(error) || this.location === ':memory:') throw error;
      this.shut();
      this.onSetAside(this.setAside(), (error as Error).message);
      this.open();
      return work();
    }
  }

  /** Closes the connection and the saving thread, whatever state they are in. */
  private shut(): void {
    this.saving?.close();
    if (this.db?.open) this.db.close();
  }

  /** Renames the file and its WAL files `<file>.corrupt-<time>`; returns that name. */
  private setAside(): string {
    const setAsideAs = `${this.location}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(this.location + suffix)) renameSync(this.location + suffix, setAsideAs + suffix);
    }
    return setAsideAs;
  }

  onDamage(listener: (reason: string) => void): void {
    this.damageListeners.push(listener);
  }

  private noticeDamage(reason: string): void {
    if (this.damaged) return;
    this.damaged = true;
    for (const listener of this.damageListeners) listener(reason);
  }

  /** The error a question ends with: damage becomes ReadModelsRebuilding (and is told), others pass. */
  private translate(error: unknown): unknown {
    if (!isDamageInUse(error)) return error;
    this.noticeDamage((error as Error).message);
    return new ReadModelsRebuilding();
  }

  reset(): string | undefined {
    this.damaged = true;
    this.shut();
    // Another instance over this file may have set it aside already: the file now in its place is
    // new, and the rebuilds of both fill it (a save never writes what the file already holds).
    const replaced = existsSync(this.location + REBUILT) || identity(this.location) !== this.opened;
    const setAsideAs = replaced ? undefined : this.setAside();
    this.open();
    return setAsideAs;
  }

  rebuilt(): void {
    this.damaged = false;
  }

  integrity(): string[] {
    this.settle();
    try {
      const found = this.db.pragma('integrity_check', { simple: false }) as { integrity_check: string }[];
      const problems = found.map((row) => row.integrity_check);
      return problems.length === 1 && problems[0] === 'ok' ? [] : problems;
    } catch (error) {
      return [(error as Error).message];
    }
  }

  private meta(name: string): string | undefined {
    return this.sql.meta.get(name)?.value;
  }

  load(): StoredSnapshot {
    this.settle();
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
    const logKey = this.meta('log_key');
    if (logKey) state.logKey = JSON.parse(logKey);
    state.revision = Number(this.meta('checkpoint') ?? -1);
    const edge = this.meta('log_edge');
    const frontier = edge === undefined ? new Frontier() : Frontier.fromEdge(edge);
    if (frontier.size !== state.revision + 1)
      throw new Error(`the tree's edge is at ${frontier.size} events, the read models at ${state.revision + 1}`);
    return { state, digest: this.meta('checkpoint_digest'), highWaterAt: this.meta('high_water_at'), frontier };
  }

  /**
   * Hands the batch over to be saved, in order. A save that fails is tried again until it lands;
   * `failed` hears of each failure (the log has the events, and memory, which GET routes serve, is
   * current). Every question asked of this store waits for the saves handed over before it.
   */
  save(batch: ProjectionBatch, failed: (error: Error) => void): void {
    this.failed = failed;
    if (this.bulkBatches) this.bulkBatches.add(batch);
    else this.saving.save(encode(batch));
  }

  /** Waits until every batch handed over so far is in the file (see SaveThread.settle). */
  settle(): void {
    this.bulkBatches?.flush();
    if (this.saving instanceof SaveThread) this.saving.settle();
  }

  *requestsSince(at: string): Iterable<RequestRow> {
    this.settle();
    try {
      yield* this.sql.requestsSince.iterate(at);
    } catch (error) {
      throw this.translate(error);
    }
  }

  /** Resolves once every batch handed over so far is in the file, the event loop going on meanwhile. */
  async caughtUp(): Promise<void> {
    this.bulkBatches?.flush();
    if (this.saving instanceof SaveThread) await this.saving.caughtUp();
  }

  /**
   * The change log's questions, once the file holds every batch handed over before the question;
   * refused while damage waits for its repair, or when another instance has set the file aside.
   */
  private async ready(): Promise<SqliteChanges> {
    if (!this.damaged && this.opened !== undefined && identity(this.location) !== this.opened) {
      this.noticeDamage(`${this.location} was set aside by another instance`);
    }
    if (!this.damaged && this.inUse && existsSync(this.location + REBUILT)) this.noticeDamage(REBUILT_WAITING);
    if (this.damaged) throw new ReadModelsRebuilding();
    await this.caughtUp();
    return this.questions;
  }

  /** Asks a question of the file: damage found on the way is told and answered ReadModelsRebuilding. */
  private async ask<T>(question: (questions: SqliteChanges) => T | Promise<T>): Promise<T> {
    try {
      return await question(await this.ready());
    } catch (error) {
      throw this.translate(error);
    }
  }

  history(resource: ResourceName, id: number): Promise<HistoryItem[]> {
    return this.ask((questions) => questions.history(resource, id));
  }

  async *changes(query: ChangeQuery): AsyncIterable<ChangeItem> {
    try {
      yield* (await this.ready()).changes(query);
    } catch (error) {
      throw this.translate(error);
    }
  }

  versionOf(resource: ResourceName, id: number, version: number): Promise<EntryRecord | undefined> {
    return this.ask((questions) => questions.versionOf(resource, id, version));
  }

  entryAt(resource: ResourceName, id: number, position: number): Promise<EntryThen> {
    return this.ask((questions) => questions.entryAt(resource, id, position));
  }

  listAt(resource: ResourceName, position: number): Promise<EntryRecord[]> {
    return this.ask((questions) => questions.listAt(resource, position));
  }

  netChanges(
    resource: ResourceName,
    ids: number[],
    from: number,
    to: number,
  ): Promise<{ before: Map<number, EntryRecord>; after: Map<number, EntryRecord> }> {
    return this.ask((questions) => questions.netChanges(resource, ids, from, to));
  }

  positionAt(time: string): Promise<number> {
    return this.ask((questions) => questions.positionAt(time));
  }

  timeOf(position: number): Promise<string | undefined> {
    return this.ask((questions) => questions.timeOf(position));
  }

  touched(from: number, to: number): Promise<Map<ResourceName, number[]>> {
    return this.ask((questions) => questions.touched(from, to));
  }

  withTree<T>(use: (node: NodeReader) => T, leaf: (index: number) => Buffer): Promise<T> {
    return this.ask(() => use(treeReader(this.db, leaf)));
  }

  /**
   * The list snapshots' own bookkeeping (`list:*` in meta) is left out: where the snapshots fall
   * depends on how the events were batched. `listSnapshots` gives them for a check by content. So is
   * a rebuild's last consistent point (CONSISTENT_AT).
   */
  *lines(): Iterable<{ table: string; key: string; value: string }> {
    this.settle();
    for (const [table, keys, values] of COMPARED) {
      const columns = [...keys, ...values].join(', ');
      const query = this.db.prepare(`SELECT ${columns} FROM ${table} ORDER BY ${keys.join(', ')}`);
      for (const row of query.iterate() as Iterable<Record<string, unknown>>) {
        const key = keys.map((k) => row[k]).join('/');
        if (table === 'meta' && (key.startsWith('list:') || key === CONSISTENT_AT)) continue;
        yield { table, key, value: JSON.stringify(values.map((v) => row[v])) };
      }
    }
  }

  *listSnapshots(): Iterable<{ resource: ResourceName; position: number; entries: EntryRecord[] }> {
    this.settle();
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
    this.bulkBatches?.flush();
    this.saving.close();
    if (this.bulk) this.db.exec(INDEXES);
    this.db.close();
  }

  /** Whether an error says a read-model file is damaged (see DAMAGED). */
  static isDamage(error: unknown): boolean {
    return isDamage(error);
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
