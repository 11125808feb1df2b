import { closeSync, existsSync, fdatasync, openSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import Database from '../../sqlite/driver.js';
import { FALLBACK_CHECKPOINT_PAGES, WalCheckpointer } from '../../sqlite/wal-checkpointer.js';
import { Subscribers } from '../catch-up.js';
import {
  type AppendResult,
  type Committed,
  checkExpected,
  type EventRow,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type LogReader,
  type OnEvent,
  parsedEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StoreDescription,
  StoreUnavailable,
  type Subscription,
} from '../port.js';
import { SCHEMA, statementsOf, toRecorded } from './statements.js';

/** Errors that mean "the store cannot work now" rather than "this code is wrong". */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|CORRUPT|NOTADB|PROTOCOL)/;

function guard<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (UNAVAILABLE.test(code)) throw new StoreUnavailable(`SQLite event store: ${code}`, { cause: error });
    throw error;
  }
}

export interface SqliteEventStoreOptions {
  /** How often other processes' appends are looked for, in ms (subscriptions only). */
  pollMs?: number;
  /** Flushes the write-ahead log to disk (tests hold it to see that nothing returns before it). */
  sync?: (fd: number) => Promise<void>;
}

const datasync = (fd: number) =>
  new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));

/**
 * The embedded store: one SQLite file in WAL mode. An append commits (`synchronous = NORMAL`: the
 * commit writes its frames to the write-ahead log without waiting for the disk), then flushes the
 * log with `fdatasync` on libuv's thread pool, and returns only after that: it is on disk before it
 * is acknowledged, as with `synchronous = FULL`, but the event loop goes on parsing requests while
 * the disk works, so that they join the next append (group commit). A torn tail of the log after a
 * power cut is discarded by SQLite's frame checksums; no acknowledged frame is in it. Subscribers in
 * this process are woken only once the append is on disk. Several processes may share the file:
 * appends take the write lock (`BEGIN IMMEDIATE`) and check the expected revision inside it.
 */
export class SqliteEventStore implements EventStore {
  readonly name = 'sqlite';
  private readonly db: BetterSqlite3.Database;
  private readonly subscribers = new Subscribers();
  private readonly pollMs: number;
  private readonly statements: ReturnType<typeof statementsOf>;
  private readonly sync: (fd: number) => Promise<void>;
  private readonly appendTransaction: BetterSqlite3.Transaction<
    (s: string, e: EventToAppend[], x: ExpectedRevision) => AppendResult & { position: number }
  >;
  private readonly walCheckpointer?: WalCheckpointer;
  /** The write-ahead log, opened once the first write created it. */
  private wal?: number;
  /**
   * The first and last positions of each append of this process that is written but not yet known
   * to be on disk, in order: reads stop before the first of them (another process's appends are read
   * as soon as they are written). `committed`: the last position this process wrote.
   */
  private readonly unflushed: [number, number][] = [];
  private committed = 0;
  /** The flush of every append written so far (the last one started). */
  private flushing?: Promise<void>;
  /** The last revision this process wrote to each stream. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 100;
    this.sync = options.sync ?? datasync;
    this.db = guard(() => new Database(file));
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    if (file !== ':memory:') {
      this.db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
      this.walCheckpointer = new WalCheckpointer(file);
    }
    this.appendTransaction = this.db.transaction((stream, events, expected) =>
      this.appendInTransaction(stream, events, expected),
    );
    this.statements = statementsOf(this.db);
  }

  private readonly appendInTransaction = (
    stream: string,
    events: EventToAppend[],
    expected: ExpectedRevision,
  ): AppendResult & { position: number } => {
    const head = this.statements.head.get(stream)?.revision ?? undefined; // MAX() of no row is NULL
    checkExpected(stream, expected, head);
    let revision = head ?? -1;
    let position = 0;
    const now = new Date().toISOString();
    for (const event of events) {
      revision += 1;
      const info = this.statements.insert.run(
        stream,
        revision,
        event.type,
        JSON.stringify(event.data),
        JSON.stringify(event.metadata),
        now,
      );
      position = Number(info.lastInsertRowid);
    }
    return { nextRevision: revision, position };
  };

  /** Read from the connection itself, so that it says what is in force. */
  describe(): StoreDescription {
    const journal = this.db.pragma('journal_mode', { simple: true });
    const synchronous = ['off', 'normal', 'full', 'extra'][this.db.pragma('synchronous', { simple: true }) as number];
    return {
      store: this.name,
      location: this.file,
      durability: `journal_mode=${journal} synchronous=${synchronous} + fdatasync of the write-ahead log: on disk before an append returns`,
    };
  }

  async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    const { result, durable } = this.commit(stream, events, expected);
    await durable;
    return result;
  }

  private commit(stream: string, events: EventToAppend[], expected: ExpectedRevision): Committed {
    const { nextRevision, position } = guard(() => this.appendTransaction.immediate(stream, events, expected));
    if (events.length > 0) {
      this.unflushed.push([position - events.length + 1, position]);
      this.committed = position;
      this.written.set(stream, nextRevision);
    }
    const durable = this.flush();
    this.flushing = durable;
    return { result: { nextRevision }, durable };
  }

  /**
   * A read stops before the first append of this process that is not on disk yet; when another
   * process has written after it (its events already acknowledged there), the read first waits for
   * this process's flush, so that it does not answer without them (a wrong 404 on an entry the
   * other instance has just created). This process's own appends alone make no wait.
   */
  private async othersWaiting(stream: string, fromRevision: number): Promise<void> {
    const before = this.readsBefore;
    if (before === undefined) return;
    const after = guard(() => this.statements.positionsFrom.all(before, stream, fromRevision));
    const own = (position: number) => this.unflushed.some(([first, last]) => position >= first && position <= last);
    if (after.some((position) => !own(position))) await this.flushing?.catch(() => {});
  }

  async head(stream: string): Promise<number> {
    await this.othersWaiting(stream, 0);
    const before = this.readsBefore;
    return guard(() =>
      before === undefined
        ? (this.statements.head.get(stream)?.revision ?? -1)
        : (this.statements.headBefore.get(stream, before)?.revision ?? -1),
    );
  }

  /** The first position of this process's appends not yet on disk: reads stop before it. */
  private get readsBefore(): number | undefined {
    return this.unflushed[0]?.[0];
  }

  /** Flushes the write-ahead log (every commit so far) to disk, then wakes this process's subscribers. */
  private async flush(): Promise<void> {
    const upTo = this.committed;
    const written = new Map(this.written);
    try {
      this.wal ??= openSync(`${this.file}-wal`, 'r');
      await this.sync(this.wal);
      while (this.unflushed.length > 0 && this.unflushed[0][0] <= upTo) this.unflushed.shift();
    } catch (error) {
      throw new StoreUnavailable(
        `SQLite event store: the log could not be flushed to disk (${(error as Error).message})`,
        { cause: error },
      );
    }
    this.subscribers.wakeAll(written);
  }

  /** Never past this process's own appends that are not on disk yet: nothing is shown before it is durable. */
  async readStream(
    stream: string,
    { fromRevision = 0, maxCount = -1 }: ReadStreamOptions = {},
  ): Promise<RecordedEvent[]> {
    await this.othersWaiting(stream, fromRevision);
    const before = this.readsBefore;
    return guard(() => {
      const rows =
        before === undefined
          ? this.statements.stream.all(stream, fromRevision, maxCount)
          : this.statements.streamBefore.all(stream, fromRevision, before, maxCount);
      return rows.map(toRecorded);
    });
  }

  async readAll({ after = 0, maxCount = -1 }: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return guard(() => this.statements.all.all(after, maxCount).map(toRecorded));
  }

  subscribe(
    stream: string,
    fromRevision: number,
    onEvent: OnEvent,
    onError: (e: Error) => void = () => {},
  ): Subscription {
    const read = (from: number) => this.readStream(stream, { fromRevision: from, maxCount: 1000 });
    return this.subscribers.add(stream, read, fromRevision, onEvent, onError, {
      minMs: this.pollMs,
      maxMs: this.pollMs,
    });
  }

  async close(): Promise<void> {
    await this.subscribers.closeAll();
    await this.walCheckpointer?.stop();
    if (this.db.open) this.db.close();
    if (this.wal !== undefined) closeSync(this.wal);
    this.wal = undefined;
  }
}

/**
 * The log of a SQLite file read in position order, the file opened read-only (see LogReader). A file
 * no process writes (no `-wal` beside it: a copy, a stopped service's) is read as immutable, so that
 * not even the `-shm` file a read of a WAL database needs is made beside it.
 */
export function sqliteLogReader(file: string): LogReader {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  const immutable = !existsSync(`${file}-wal`);
  const db = immutable
    ? new Database(`file:${file.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}?immutable=1`, {
        readonly: true,
      })
    : new Database(file, { readonly: true, fileMustExist: true });
  const rows = db.prepare<[number, number], Row>(
    'SELECT position, stream, revision, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?',
  );
  return {
    name: file,
    read: async (after, maxCount) => rows.all(after, maxCount).map(parsedEvent),
    close: async () => {
      db.close();
    },
  };
}

type Row = EventRow;
