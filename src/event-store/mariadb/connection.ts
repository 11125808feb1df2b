import { readFileSync } from 'node:fs';
import type { Connection as CoreConnection } from 'mysql2';
import mysql, { type Pool, type PoolConnection, type RowDataPacket } from 'mysql2/promise';
import { isBroken, isRace, isTransient, translate } from './errors.js';
import { migrate } from './schema.js';

/** How the pool reaches the database (see MariadbSettings). */
export interface PoolSettings {
  url: string;
  poolSize?: number;
  tls?: boolean;
  caFile?: string;
  /** The longest one statement may take before it is abandoned (its connection closed). */
  queryTimeoutMs?: number;
}

/** A statement on one connection, bounded by the query timeout. */
export type Run = <T extends RowDataPacket[] | mysql.ResultSetHeader>(sql: string, values?: unknown[]) => Promise<T>;

export const DEFAULT_QUERY_TIMEOUT_MS = 5000;
/** How often a first start retries its migration when instances starting together collide. */
const MIGRATION_ATTEMPTS = 10;

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

/** Pool options from the settings: the URL's parts, the pool size, TLS and the time to connect. */
function poolOptions(settings: PoolSettings): mysql.PoolOptions {
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
    connectTimeout: Math.min(5000, settings.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS),
    // Revisions and positions stay far below 2^53; BIGINT columns come back as numbers.
    supportBigNumbers: true,
    bigNumberStrings: false,
    enableKeepAlive: true,
    ssl: settings.tls ? { ca: settings.caFile ? readFileSync(settings.caFile) : undefined } : undefined,
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** MariaDB's "unknown database". */
const ER_BAD_DB_ERROR = 1049;

/**
 * The database the URL names, made when it does not exist yet (a new store, the target of copy-log
 * or restore), in utf8mb4; without the privilege to make it, the error says what to do.
 */
async function createDatabase(settings: PoolSettings): Promise<void> {
  const { database, host, port, user, password, ssl, connectTimeout } = poolOptions(settings);
  const connection = await mysql.createConnection({ host, port, user, password, ssl, connectTimeout });
  try {
    await connection.query(
      `CREATE DATABASE IF NOT EXISTS \`${String(database).replace(/`/g, '``')}\` CHARACTER SET utf8mb4`,
    );
  } catch (error) {
    throw new Error(
      `the database ${database} does not exist and could not be made (${(error as Error).message}): ` +
        `create it (CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4) or give this user the CREATE privilege`,
    );
  } finally {
    await connection.end();
  }
}

/**
 * The pool, with what every session needs: statements bounded in time (a frozen server answers
 * within the timeout with an error, and the connection is closed, which rolls back its
 * transaction), and, on a Galera node, causal reads: `wsrep_sync_wait` for this service's own
 * sessions (with Galera's default of 0, a node may answer a read before it applied what another
 * node committed, and a decision made on that read would refuse a write wrongly).
 */
export class Connections {
  readonly pool: Pool;
  /** The longest one statement may take (MARIADB_QUERY_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** The node is a Galera node (`wsrep_on`): its sessions wait for causality before they read. */
  galera = false;
  private ready?: Promise<void>;
  durability = 'not yet asked';

  constructor(private readonly settings: PoolSettings) {
    this.pool = mysql.createPool(poolOptions(settings));
    this.timeoutMs = settings.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.pool.on('connection', (connection) => {
      // The pool hands its core (callback) connection to this event, whatever the typings say.
      const core = connection as unknown as CoreConnection;
      // An idle connection the server closed is an event on the pool, not a crash of the process.
      core.on('error', () => {});
      if (this.galera) core.query(SYNC_WAIT, () => {});
    });
  }

  /** Creates or upgrades the schema once, before the first statement (see schema.ts). */
  open(): Promise<void> {
    this.ready ??= this.migrate().catch((error) => {
      this.ready = undefined;
      throw translate(error);
    });
    return this.ready;
  }

  /**
   * The migration, the Galera check and the durability note. Instances starting together on a new
   * database collide in the migration (a deadlock, or a Galera certification conflict, on the
   * schema's own rows): it is idempotent, so it is run again.
   */
  private async migrate(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const connection = await this.pool.getConnection().catch(async (error) => {
        if ((error as { errno?: number }).errno !== ER_BAD_DB_ERROR || attempt > 1) throw error;
        await createDatabase(this.settings);
        return this.pool.getConnection();
      });
      try {
        this.galera = await isGaleraNode(connection);
        if (this.galera) await connection.query(SYNC_WAIT);
        await migrate(connection);
        this.durability = await durabilityOf(connection, this.galera);
        return;
      } catch (error) {
        if (attempt >= MIGRATION_ATTEMPTS || !(isRace(error) || isTransient(error))) throw error;
        await pause(50 * attempt + Math.random() * 100);
      } finally {
        connection.release();
      }
    }
  }

  /**
   * Runs `work` on one connection: each statement bounded by the query timeout. A connection whose
   * statement timed out or broke takes no further statement and is closed rather than given back.
   */
  async using<T>(work: (run: Run) => Promise<T>): Promise<T> {
    await this.open();
    let connection: PoolConnection;
    try {
      connection = await this.pool.getConnection();
    } catch (error) {
      throw translate(error);
    }
    // A statement that timed out stays the connection's current command in the driver: a statement
    // sent after it (a ROLLBACK) would wait behind it, its own timeout not started, for as long as the
    // server does not answer. Once broken, the connection takes no more statements.
    let broken: unknown;
    const run: Run = async (sql, values) => {
      if (broken) throw broken;
      try {
        const [result] = await connection.query({ sql, values, timeout: this.timeoutMs });
        return result as never;
      } catch (error) {
        if (isBroken(error)) broken = error;
        throw error;
      }
    };
    try {
      return await work(run);
    } catch (error) {
      if (isBroken(error)) broken ??= error;
      throw error;
    } finally {
      if (broken) connection.destroy();
      else connection.release();
    }
  }

  async end(): Promise<void> {
    await this.pool.end().catch(() => {});
  }
}

/** Causal reads for this session, whatever else the node's default asks (bit 1: reads wait). */
const SYNC_WAIT = 'SET SESSION wsrep_sync_wait = @@global.wsrep_sync_wait | 1';

/** A Galera node has `wsrep_on`; MySQL has no such variable at all. */
async function isGaleraNode(connection: PoolConnection): Promise<boolean> {
  try {
    const [rows] = await connection.query<RowDataPacket[]>('SELECT @@wsrep_on AS wsrep');
    return Number(rows[0].wsrep) === 1;
  } catch (error) {
    if ((error as { errno?: number }).errno === 1193) return false; // unknown system variable
    throw error;
  }
}

async function durabilityOf(connection: PoolConnection, galera: boolean): Promise<string> {
  const [rows] = await connection.query<RowDataPacket[]>(
    'SELECT @@innodb_flush_log_at_trx_commit AS flush, @@version AS version',
  );
  const { flush, version } = rows[0];
  const synced =
    Number(flush) === 1 ? ': on disk (redo log fsync) before an append returns' : ': NOT synced at every commit';
  const cluster = galera ? '; Galera: certified by the cluster at commit, reads causal (wsrep_sync_wait)' : '';
  return `innodb_flush_log_at_trx_commit=${flush} (${version})${synced}${cluster}`;
}
