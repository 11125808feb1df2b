import { existsSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import type { ChangeItem, HistoryItem, RequestRow } from '../../../projections/changes.js';
import type { ResourceName } from '../../domain/resources.js';
import type { NodeReader } from '../../engine/merkle.js';
import type { EntryRecord } from '../../engine/table.js';
import Database from '../../sqlite/driver.js';
import type {
  ChangeQuery,
  EntryThen,
  ProjectionBatch,
  ReadModelStore,
  RowDifference,
  StoredSnapshot,
} from '../port.js';
import { BulkBatches } from './bulk-batches.js';
import { SqliteChanges } from './changes.js';
import { DamageWatch, identity, isDamage, isDamageInUse, moveFile, REBUILT, setAside } from './damage.js';
import { differencesFrom, linesDifferences } from './file-compare.js';
import { fileLines, fileListSnapshots, readSnapshot, treeReader } from './file-reads.js';
import { bulkStart, integrity, upgrade } from './layout.js';
import { listAtByKeys } from './moments.js';
import { encode } from './save-jobs.js';
import { SaveThread } from './save-thread.js';
import { SaveQueue, Saver } from './saving.js';
import { INDEXES } from './schema.js';
import { integrityApart } from './threads.js';

export { REBUILT, REBUILT_WAITING } from './damage.js';

function statements(db: BetterSqlite3.Database) {
  return {
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
    requestsSince: db.prepare<[string], RequestRow>('SELECT * FROM requests WHERE at >= ?'),
  };
}

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
  /** Damage found while the file serves (damage.ts). */
  private readonly damage: DamageWatch;

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
    this.damage = new DamageWatch(location);
    this.recovering(() => this.open());
  }

  private open(): void {
    if (this.inUse && existsSync(this.location + REBUILT)) moveFile(this.location + REBUILT, this.location);
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
    this.db.transaction(() => upgrade(this.db, this.bulk)).immediate();
    this.sql = statements(this.db);
    this.damage.opened = this.inUse ? identity(this.location) : undefined;
    const failed = (error: Error) => {
      if (isDamageInUse(error)) this.damage.notice(error.message);
      this.failed(error);
    };
    const here = () => new SaveQueue(new Saver(this.db, this.inUse ? this.location : undefined, this.bulk), failed);
    this.saving =
      this.location === ':memory:' ? here() : new SaveThread(this.location, failed, here, this.bulk, this.saveHoldMs);
    const saving = this.saving;
    this.bulkBatches = this.bulk ? new BulkBatches((job) => saving.save(job), bulkStart(this.db)) : undefined;
    this.changeQueries = undefined;
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

  /** Runs `work`; if the file turns out to be damaged, sets it aside, opens an empty one and runs it again. */
  private recovering<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (!isDamage(error) || this.location === ':memory:') throw error;
      this.shut();
      this.onSetAside(setAside(this.location), (error as Error).message);
      this.open();
      return work();
    }
  }

  /** Closes the connection and the saving thread, whatever state they are in. */
  private shut(): void {
    this.saving?.close();
    if (this.db?.open) this.db.close();
  }

  onDamage(listener: (reason: string) => void): void {
    this.damage.listen(listener);
  }

  reset(): string | undefined {
    this.damage.damaged = true;
    this.shut();
    // Another instance over this file may have set it aside already: the file now in its place is
    // new, and the rebuilds of both fill it (a save never writes what the file already holds).
    const replaced = existsSync(this.location + REBUILT) || this.damage.replaced;
    const setAsideAs = replaced ? undefined : setAside(this.location);
    this.open();
    return setAsideAs;
  }

  rebuilt(): void {
    this.damage.damaged = false;
  }

  integrity(): Promise<string[]> {
    this.settle();
    return this.location === ':memory:' ? Promise.resolve(integrity(this.db)) : integrityApart(this.location);
  }

  private meta(name: string): string | undefined {
    return this.sql.meta.get(name)?.value;
  }

  load(): StoredSnapshot {
    this.settle();
    return this.recovering(() => readSnapshot(this.db, (name) => this.meta(name)));
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
      throw this.damage.translate(error);
    }
  }

  /** Resolves once every batch handed over so far is in the file, the event loop going on meanwhile. */
  async caughtUp(): Promise<void> {
    this.bulkBatches?.flush();
    if (this.saving instanceof SaveThread) await this.saving.caughtUp();
  }

  /** Every batch handed over is in the file; refused while damage waits for repair or the file is set aside. */
  private async ready(): Promise<void> {
    this.damage.check(this.inUse);
    await this.caughtUp();
  }

  /** Asks once ready (`byKeys`: a bulk file without its indexes answers from its keys); damage found is told. */
  private async ask<T>(question: (questions: SqliteChanges) => T | Promise<T>, byKeys?: () => Promise<T>): Promise<T> {
    try {
      await this.ready();
      return await (byKeys && this.bulk && !this.changeQueries ? byKeys() : question(this.questions));
    } catch (error) {
      throw this.damage.translate(error);
    }
  }

  history(resource: ResourceName, id: number): Promise<HistoryItem[]> {
    return this.ask((questions) => questions.history(resource, id));
  }

  async *changes(query: ChangeQuery): AsyncIterable<ChangeItem> {
    try {
      await this.ready();
      yield* this.questions.changes(query);
    } catch (error) {
      throw this.damage.translate(error);
    }
  }

  versionOf(resource: ResourceName, id: number, version: number): Promise<EntryRecord | undefined> {
    return this.ask((questions) => questions.versionOf(resource, id, version));
  }

  entryAt(resource: ResourceName, id: number, position: number): Promise<EntryThen> {
    return this.ask((questions) => questions.entryAt(resource, id, position));
  }

  listAt(resource: ResourceName, position: number): Promise<EntryRecord[]> {
    const byKeys = () => listAtByKeys(this.db, resource, position);
    return this.ask((questions) => questions.listAt(resource, position), byKeys);
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

  /** Every row but the list snapshots' bookkeeping and a rebuild's last consistent point (file-reads.ts). */
  lines(): Iterable<{ table: string; key: string; value: string }> {
    this.settle();
    return fileLines(this.db);
  }

  /** Read beside the rebuilt file on a connection of its own (file-compare.ts); by lines when it is in memory. */
  differences(rebuilt: ReadModelStore): RowDifference[] {
    this.settle();
    rebuilt.settle();
    if (rebuilt.location === ':memory:') return linesDifferences(rebuilt.lines(), this.lines());
    return differencesFrom(this.db, rebuilt.location);
  }

  listSnapshots(): Iterable<{ resource: ResourceName; position: number; entries: EntryRecord[] }> {
    this.settle();
    return fileListSnapshots(this.db);
  }

  close(thrownAway = false): void {
    if (!this.db.open) return;
    this.bulkBatches?.flush();
    if (this.saving instanceof SaveThread) this.saving.close(!thrownAway);
    else this.saving.close();
    if (this.bulk && !thrownAway) this.db.exec(INDEXES);
    this.db.close();
  }
}
