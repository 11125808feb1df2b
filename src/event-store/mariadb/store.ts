import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import { type Poll, Subscribers } from '../catch-up.js';
import {
  type AppendResult,
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
import { Connections, type PoolSettings, type Run, redactUrl } from './connection.js';
import { isRace, isTransient, translate } from './errors.js';

export { redactUrl } from './connection.js';

export interface MariadbSettings extends PoolSettings {
  /** Following other instances: `minMs` after appends were found, backing off to `maxMs` when idle. */
  poll?: Poll;
}

const READ_BATCH = 1000;
/** Revisions per query of a stream read (see readStream). */
const READ_RANGE = 10_000;
/** Rows per INSERT, by size: well under MariaDB's default max_allowed_packet (16 MiB). */
const CHUNK_BYTES = 4 * 1024 * 1024;

interface Row extends RowDataPacket, EventRow {}

const COLUMNS = 'position, stream, revision, type, data, metadata';

const toRecorded = (row: Row): RecordedEvent => ({
  stream: row.stream,
  revision: Number(row.revision),
  position: Number(row.position),
  type: row.type,
  data: JSON.parse(row.data),
  metadata: JSON.parse(row.metadata),
});

type Values = [stream: string, revision: number, type: string, data: string, metadata: string];

function* chunks(rows: Values[]): Generator<Values[]> {
  let chunk: Values[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = row[3].length + row[4].length + 200;
    if (chunk.length > 0 && bytes + size > CHUNK_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The log in a MariaDB or MySQL database (InnoDB), a single server or a Galera cluster: one row per
 * event, a unique key on (stream, revision). An append runs in one transaction that reads the
 * stream's head with a locking read, checks the expected revision and inserts every event; a
 * duplicate key (1062), a deadlock or a Galera certification conflict (1213) means another instance
 * appended first: the port's WrongExpectedRevision, so the command is decided again. The
 * configuration is one stream, so its revision order is its commit order, and following it by
 * revision misses nothing. Every statement is bounded in time (MARIADB_QUERY_TIMEOUT_MS).
 */
export class MariadbEventStore implements EventStore {
  readonly name = 'mariadb';
  private readonly connections: Connections;
  private readonly subscribers = new Subscribers();
  private readonly poll: Poll;

  constructor(private readonly settings: MariadbSettings) {
    this.connections = new Connections(settings);
    this.poll = settings.poll ?? { minMs: 20, maxMs: 500 };
  }

  private async using<T>(work: (run: Run) => Promise<T>): Promise<T> {
    try {
      return await this.connections.using(work);
    } catch (error) {
      throw translate(error);
    }
  }

  describe(): StoreDescription {
    const { durability } = this.connections;
    return { store: this.name, location: redactUrl(this.settings.url), durability };
  }

  /**
   * One transaction: the locking read of the stream's head, the expected-revision check, the rows in
   * INSERTs of at most CHUNK_BYTES each (a large append, such as an import, would otherwise exceed
   * the server's max_allowed_packet), then the commit: all of it or none. An error before the COMMIT
   * is sent writes nothing (the transaction is rolled back, or its connection closed, which rolls it
   * back). A COMMIT that gets no answer may have been recorded: the log is asked (see `confirm`).
   */
  async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    await this.connections.open().catch((error) => {
      throw translate(error);
    });
    const rows: Values[] = [];
    const phase = { committing: false };
    try {
      const result = await this.connections.using((run) =>
        this.transaction(run, stream, events, expected, rows, phase),
      );
      this.subscribers.wakeAll(new Map([[stream, result.nextRevision]]));
      return result;
    } catch (error) {
      // A certification conflict at COMMIT is a lost race, known as such: nothing to ask.
      if (phase.committing && !isRace(error) && isTransient(error)) return this.confirm(rows, error);
      throw translate(error, { stream, expected });
    }
  }

  /** The append's transaction; `rows` receives what it inserts, `phase` when its COMMIT is sent. */
  private async transaction(
    run: Run,
    stream: string,
    events: EventToAppend[],
    expected: ExpectedRevision,
    rows: Values[],
    phase: { committing: boolean },
  ): Promise<AppendResult> {
    await run('START TRANSACTION');
    try {
      const [head] = await run<RowDataPacket[]>(
        'SELECT MAX(revision) AS revision FROM pmacontrol_events WHERE stream = ? FOR UPDATE',
        [stream],
      );
      const current = head.revision === null ? undefined : Number(head.revision);
      checkExpected(stream, expected, current);
      const first = (current ?? -1) + 1;
      for (const [i, e] of events.entries())
        rows.push([stream, first + i, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)]);
      for (const chunk of chunks(rows))
        await run<ResultSetHeader>('INSERT INTO pmacontrol_events (stream, revision, type, data, metadata) VALUES ?', [
          chunk,
        ]);
      phase.committing = true;
      await run('COMMIT');
      return { nextRevision: first + events.length - 1 };
    } catch (error) {
      if (!phase.committing) await run('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /**
   * A COMMIT sent without an answer (the connection broke, the statement timed out, the node lost
   * its quorum): the events may be in the log. It is asked, on another connection, until it answers
   * or the query timeout has passed once more (a frozen server must not hold the writer): the first
   * row there, byte for byte, means the append was recorded; any other row or none, that it was not.
   * Without an answer the outcome is unknown, and the error says so.
   */
  private async confirm(rows: Values[], cause: unknown): Promise<AppendResult> {
    const [stream, first, type, data, metadata] = rows[0];
    const until = Date.now() + this.connections.timeoutMs;
    for (;;) {
      let found: Row | undefined;
      try {
        [found] = await this.using((run) =>
          run<Row[]>('SELECT type, data, metadata FROM pmacontrol_events WHERE stream = ? AND revision = ?', [
            stream,
            first,
          ]),
        );
      } catch {
        if (Date.now() >= until) {
          throw new StoreUnavailable(`MariaDB event store: a commit got no answer (${(cause as Error).message})`, {
            cause,
            outcome: 'unknown',
          });
        }
        await pause(200);
        continue;
      }
      if (!found || found.type !== type || found.data !== data || found.metadata !== metadata) throw translate(cause);
      const nextRevision = first + rows.length - 1;
      this.subscribers.wakeAll(new Map([[stream, nextRevision]]));
      return { nextRevision };
    }
  }

  /**
   * A stream's events from a revision, asked as ranges of revisions: given `revision >= ?` alone,
   * MariaDB 10.11 may read `(stream, revision)` on `stream` only (ref access, its statistics once
   * recalculated) and skip every earlier revision of the stream row by row: 1.8 s for 1,000 events
   * at revision 7,000,000 (bench/history.ts, the rebuild on MariaDB). A range bounded on both sides
   * is read as a range. Revisions follow one another; a range that comes back short before the
   * stream's head (a row removed by hand) is followed by the next one.
   */
  async readStream(stream: string, { fromRevision = 0, maxCount = -1 }: ReadStreamOptions = {}) {
    const wanted = maxCount < 0 ? Number.POSITIVE_INFINITY : maxCount;
    const rows: Row[] = [];
    let head: number | undefined;
    for (let from = fromRevision; rows.length < wanted; from += READ_RANGE) {
      const count = Math.min(wanted - rows.length, READ_RANGE);
      const some = await this.using((run) =>
        run<Row[]>(
          `SELECT ${COLUMNS} FROM pmacontrol_events WHERE stream = ? AND revision BETWEEN ? AND ?
           ORDER BY revision LIMIT ?`,
          [stream, from, from + READ_RANGE - 1, count],
        ),
      );
      rows.push(...some);
      if (some.length < count) {
        head ??= await this.head(stream);
        if (from + READ_RANGE - 1 >= head) break;
      }
    }
    return rows.map(toRecorded);
  }

  async head(stream: string): Promise<number> {
    const [row] = await this.using((run) =>
      run<RowDataPacket[]>('SELECT MAX(revision) AS revision FROM pmacontrol_events WHERE stream = ?', [stream]),
    );
    return row.revision === null ? -1 : Number(row.revision);
  }

  /**
   * Events in position (AUTO_INCREMENT) order. Appends to one stream are serialised by the locking
   * read of its head, so their positions follow commit order; across streams a transaction could
   * commit a lower position after a reader passed it. The service keeps everything in one stream.
   */
  async readAll({ after = 0, maxCount = -1 }: ReadAllOptions = {}) {
    const rows = await this.using((run) =>
      run<Row[]>(`SELECT ${COLUMNS} FROM pmacontrol_events WHERE position > ? ORDER BY position LIMIT ?`, [
        after,
        maxCount < 0 ? Number.MAX_SAFE_INTEGER : maxCount,
      ]),
    );
    return rows.map(toRecorded);
  }

  subscribe(stream: string, fromRevision: number, onEvent: OnEvent, onError: (e: Error) => void = () => {}) {
    return this.subscribers.add(
      stream,
      (from) => this.readStream(stream, { fromRevision: from, maxCount: READ_BATCH }),
      fromRevision,
      onEvent,
      onError,
      this.poll,
    ) as Subscription;
  }

  async close(): Promise<void> {
    await this.subscribers.closeAll();
    await this.connections.end();
  }
}

/**
 * The log of a MariaDB/MySQL database read in position order on one connection that writes nothing
 * (no schema is made: a user with SELECT alone may read it; see LogReader).
 */
export async function mariadbLogReader(url: string): Promise<LogReader> {
  const { createConnection } = await import('mysql2/promise');
  const connection = await createConnection({ uri: url.replace(/^mariadb:/, 'mysql:'), supportBigNumbers: true });
  return {
    name: redactUrl(url),
    read: async (after, maxCount) => {
      const [rows] = await connection.query<Row[]>(
        `SELECT ${COLUMNS} FROM pmacontrol_events WHERE position > ? ORDER BY position LIMIT ?`,
        [after, maxCount],
      );
      return rows.map((row) => parsedEvent({ ...row, position: Number(row.position), revision: Number(row.revision) }));
    },
    close: () => connection.end(),
  };
}
