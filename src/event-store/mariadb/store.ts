import { readFileSync } from 'node:fs';
import mysql, { type Pool, type PoolConnection, type RowDataPacket } from 'mysql2/promise';
import { type Poll, Subscribers } from '../catch-up.js';
import {
  type AppendResult,
  checkExpected,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type OnEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StoreDescription,
  StoreUnavailable,
  type Subscription,
  WrongExpectedRevision,
} from '../port.js';
import { migrate } from './schema.js';

export interface MariadbSettings {
  /** `mysql://user:password@host:port/database` (`mariadb://` is the same). */
  url: string;
  /** Connections in the pool. */
  poolSize?: number;
  /** TLS: off, on (the server's certificate checked against the system's CAs, or `caFile`). */
  tls?: boolean;
  caFile?: string;
  /** Following other instances: `minMs` after appends were found, backing off to `maxMs` when idle. */
  poll?: Poll;
}

const READ_BATCH = 1000;
/** Errors that say two appends raced: a duplicate (stream, revision), a deadlock or a Galera certification conflict. */
const RACE = new Set([1062, 1213]);
/** Errors that say "the database cannot work now", as opposed to "this code is wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_OPTION_PREVENTS_STATEMENT',
  'ER_UNKNOWN_COM_ERROR',
  'WSREP_NOT_READY',
]);

interface Row extends RowDataPacket {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

const toRecorded = (row: Row): RecordedEvent => ({
  stream: row.stream,
  revision: Number(row.revision),
  position: Number(row.position),
  type: row.type,
  data: JSON.parse(row.data),
  metadata: JSON.parse(row.metadata),
});

/** The database's error as the port's: a lost race, an unavailable store, or the error itself. */
function translate(error: unknown, stream?: string, expected?: ExpectedRevision): Error {
  const { errno, code, message } = error as { errno?: number; code?: string; message?: string };
  if (stream !== undefined && errno !== undefined && RACE.has(errno)) {
    return new WrongExpectedRevision(stream, expected ?? 'any', 'moved');
  }
  if ((code && UNAVAILABLE_CODES.has(code)) || (errno !== undefined && errno >= 2000 && errno < 3000)) {
    return new StoreUnavailable(`MariaDB event store: ${code ?? errno} ${message ?? ''}`.trim(), { cause: error });
  }
  if (error instanceof Error && /closed state|Pool is closed|connect ETIMEDOUT/.test(error.message)) {
    return new StoreUnavailable(`MariaDB event store: ${error.message}`, { cause: error });
  }
  return error as Error;
}

/** The URL without its password, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** Pool options from the settings: the URL's parts, the pool size and TLS. */
function poolOptions(settings: MariadbSettings): mysql.PoolOptions {
  const url = new URL(settings.url.replace(/^mariadb:/, 'mysql:'));
  if (url.protocol !== 'mysql:') throw new Error('MARIADB_URL must start with mysql:// or mariadb://');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!database) throw new Error('MARIADB_URL must name a database: mysql://user:password@host:port/database');
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database,
    connectionLimit: settings.poolSize ?? 10,
    connectTimeout: 5000,
    // Revisions and positions stay far below 2^53; BIGINT columns come back as numbers.
    supportBigNumbers: true,
    bigNumberStrings: false,
    enableKeepAlive: true,
    ssl: settings.tls ? { ca: settings.caFile ? readFileSync(settings.caFile) : undefined } : undefined,
  };
}

/**
 * The log in a MariaDB or MySQL database (InnoDB): one row per event, a unique key on (stream,
 * revision). An append runs in one transaction that reads the stream's head with a locking read,
 * checks the expected revision and inserts every event; a duplicate key (1062), a deadlock or a Galera
 * certification conflict (1213) means another instance appended first: the port's
 * WrongExpectedRevision, so the command is decided again. The configuration is one stream, so its
 * revision order is its commit order, and following it by revision misses nothing.
 */
/** Rows per INSERT, by size: well under MariaDB's default max_allowed_packet (16 MiB). */
const CHUNK_BYTES = 4 * 1024 * 1024;

function* chunks(rows: (string | number)[][]): Generator<(string | number)[][]> {
  let chunk: (string | number)[][] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = (row[3] as string).length + (row[4] as string).length + 200;
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

export class MariadbEventStore implements EventStore {
  readonly name = 'mariadb';
  private readonly pool: Pool;
  private readonly subscribers = new Subscribers();
  private readonly poll: Poll;
  private ready?: Promise<void>;
  private durability = 'not yet asked';

  constructor(private readonly settings: MariadbSettings) {
    this.pool = mysql.createPool(poolOptions(settings));
    // An idle connection the server closed is an event on the pool, not a crash of the process.
    this.pool.on('connection', (connection) => connection.on('error', () => {}));
    this.poll = settings.poll ?? { minMs: 20, maxMs: 500 };
  }

  /** Creates or upgrades the schema once, before the first statement (see schema.ts). */
  private open(): Promise<void> {
    this.ready ??= (async () => {
      const connection = await this.pool.getConnection();
      try {
        await migrate(connection);
        const [rows] = await connection.query<RowDataPacket[]>(
          'SELECT @@innodb_flush_log_at_trx_commit AS flush, @@version AS version',
        );
        const { flush, version } = rows[0];
        this.durability =
          `innodb_flush_log_at_trx_commit=${flush} (${version})` +
          (Number(flush) === 1
            ? ': on disk (redo log fsync) before an append returns'
            : ': NOT synced at every commit');
      } finally {
        connection.release();
      }
    })().catch((error) => {
      this.ready = undefined;
      throw translate(error);
    });
    return this.ready;
  }

  private async using<T>(
    work: (connection: PoolConnection) => Promise<T>,
    stream?: string,
    expected?: ExpectedRevision,
  ) {
    await this.open();
    let connection: PoolConnection;
    try {
      connection = await this.pool.getConnection();
    } catch (error) {
      throw translate(error);
    }
    try {
      return await work(connection);
    } catch (error) {
      throw translate(error, stream, expected);
    } finally {
      connection.release();
    }
  }

  describe(): StoreDescription {
    return { store: this.name, location: redactUrl(this.settings.url), durability: this.durability };
  }

  /**
   * One transaction: the locking read of the stream's head, the expected-revision check, then the
   * rows in INSERTs of at most CHUNK_BYTES each (a large append, such as an import, would otherwise
   * exceed the server's max_allowed_packet), then the commit: all of it or none.
   */
  async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    const result = await this.using(
      async (connection) => {
        await connection.beginTransaction();
        try {
          const [head] = await connection.query<RowDataPacket[]>(
            'SELECT MAX(revision) AS revision FROM pmacontrol_events WHERE stream = ? FOR UPDATE',
            [stream],
          );
          const current = head[0].revision === null ? undefined : Number(head[0].revision);
          checkExpected(stream, expected, current);
          const first = (current ?? -1) + 1;
          const rows = events.map((event, i) => [
            stream,
            first + i,
            event.type,
            JSON.stringify(event.data),
            JSON.stringify(event.metadata),
          ]);
          let last: mysql.ResultSetHeader | undefined;
          let lastCount = 0;
          for (const chunk of chunks(rows)) {
            [last] = await connection.query<mysql.ResultSetHeader>(
              'INSERT INTO pmacontrol_events (stream, revision, type, data, metadata) VALUES ?',
              [chunk],
            );
            lastCount = chunk.length;
          }
          await connection.commit();
          // A multi-row INSERT of a known row count takes consecutive ids under innodb_autoinc_lock_mode
          // 0 and 1 (MariaDB's default), and under 2 as long as no other stream is appended at once
          // (appends to one stream are serialised by the locking read above).
          return { nextRevision: first + events.length - 1, position: last!.insertId + lastCount - 1 };
        } catch (error) {
          await connection.rollback().catch(() => {});
          throw error;
        }
      },
      stream,
      expected,
    );
    this.subscribers.wakeAll(new Map([[stream, result.nextRevision]]));
    return result;
  }

  async readStream(stream: string, { fromRevision = 0, maxCount = -1 }: ReadStreamOptions = {}) {
    return this.using(async (connection) => {
      const [rows] = await connection.query<Row[]>(
        'SELECT position, stream, revision, type, data, metadata FROM pmacontrol_events' +
          ' WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
        [stream, fromRevision, maxCount < 0 ? Number.MAX_SAFE_INTEGER : maxCount],
      );
      return rows.map(toRecorded);
    });
  }

  /**
   * Events in position (AUTO_INCREMENT) order. Appends to one stream are serialised by the locking
   * read of its head, so their positions follow commit order; across streams a transaction could
   * commit a lower position after a reader passed it. The service keeps everything in one stream.
   */
  async readAll({ after = 0, maxCount = -1 }: ReadAllOptions = {}) {
    return this.using(async (connection) => {
      const [rows] = await connection.query<Row[]>(
        'SELECT position, stream, revision, type, data, metadata FROM pmacontrol_events' +
          ' WHERE position > ? ORDER BY position LIMIT ?',
        [after, maxCount < 0 ? Number.MAX_SAFE_INTEGER : maxCount],
      );
      return rows.map(toRecorded);
    });
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
    await this.pool.end().catch(() => {});
  }
}
