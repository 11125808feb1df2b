import { type Connection, createConnection } from 'mysql2/promise';
import type { PmaControlDatabase, ProjectionState, TableTransaction, TableWork } from './database.js';
import { Blocked, STATE_TABLE } from './database.js';
import { bySameColumns, quote, updateOf } from './mariadb-sql.js';
import type { Row } from './rows.js';

/**
 * The adapter of PmaControlDatabase (database.ts) over MariaDB/MySQL (mysql2): PmaControl's own database
 * as a read model, and, in a table of this service's, the position applied and which instance applies (a
 * lease). Every batch is one transaction that checks the lease, writes the rows and moves the position.
 */

/** The lease and the position, in one row; created on first use. */
const CREATE_STATE = `CREATE TABLE IF NOT EXISTS ${quote(STATE_TABLE)} (
  id TINYINT NOT NULL PRIMARY KEY,
  position BIGINT NOT NULL,
  holder VARCHAR(200) NULL,
  lease_until DATETIME(6) NULL,
  applied_at DATETIME(6) NULL
) ENGINE=InnoDB`;

/** Rows per INSERT: large enough to keep round trips few, small enough for max_allowed_packet. */
const CHUNK = 500;

/** MariaDB's errors for a value a column refuses: a duplicate, too long, a character it has not, out of range, a null. */
const REFUSED_VALUE = new Set([1062, 1406, 1366, 1264, 1048]);

/** One connection, made when first used and again after an error. */
class Session {
  private connection?: Connection;

  constructor(
    private readonly open: () => Promise<Connection>,
    private readonly timeoutMs: number,
  ) {}

  private async connected(): Promise<Connection> {
    if (this.connection) return this.connection;
    const connection = await this.open();
    connection.on('error', () => this.drop());
    this.connection = connection;
    return connection;
  }

  async query<T>(sql: string, values?: unknown[]): Promise<T> {
    const connection = await this.connected();
    try {
      const [rows] = await connection.query({ sql, values, timeout: this.timeoutMs });
      return rows as T;
    } catch (error) {
      // A value refused leaves the connection (and its transaction, rolled back by the caller) usable.
      if (!REFUSED_VALUE.has((error as { errno?: number }).errno ?? 0)) this.drop();
      throw error;
    }
  }

  /** Forgets the connection: the server rolls back what it had open; the next query connects again. */
  drop(): void {
    this.connection?.destroy();
    this.connection = undefined;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await connection?.end().catch(() => connection.destroy());
  }
}

export class MariadbPmaControlDatabase implements PmaControlDatabase {
  /** Batches, overwrites and the lease. */
  private readonly writer: Session;
  /** Reads (drift, the status, the import): never inside a batch's transaction. */
  private readonly reader: Session;
  /** The columns each table has, read at each connection: an older PmaControl lacks some. */
  private readonly columns = new Map<string, Set<string>>();

  constructor(
    private readonly url: string,
    private readonly queryTimeoutMs = 5000,
  ) {
    this.writer = new Session(() => this.connect(true), queryTimeoutMs);
    this.reader = new Session(() => this.connect(false), queryTimeoutMs);
  }

  private async connect(writes: boolean): Promise<Connection> {
    const connection = await createConnection({
      uri: this.url,
      connectTimeout: this.queryTimeoutMs,
      dateStrings: true,
      timezone: 'Z',
    });
    try {
      // The log keeps references whole at the end of each batch; rows are written in one order per batch.
      // A value a column cannot hold is an error, never stored cut or as '?' (whatever the server's mode).
      if (writes)
        await connection.query(
          "SET SESSION foreign_key_checks = 0, sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')",
        );
      await connection.query("SET SESSION time_zone = '+00:00'");
      await connection.query(CREATE_STATE);
      const [rows] = (await connection.query(
        'SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()',
      )) as unknown as [{ t: string; c: string }[]];
      this.columns.clear();
      for (const { t, c } of rows) this.columns.set(t, (this.columns.get(t) ?? new Set()).add(c));
    } catch (error) {
      connection.destroy();
      throw error;
    }
    return connection;
  }

  private query<T>(sql: string, values?: unknown[]): Promise<T> {
    return this.writer.query<T>(sql, values);
  }

  async close(): Promise<void> {
    await Promise.all([this.writer.close(), this.reader.close()]);
  }

  /** The tables and columns known: read when a connection is made. */
  private async known(): Promise<void> {
    if (this.columns.size === 0) await this.reader.query('SELECT 1');
  }

  /** Whether the table exists in PmaControl's database. */
  async hasTable(table: string): Promise<boolean> {
    await this.known();
    return this.columns.has(table);
  }

  async state(): Promise<ProjectionState> {
    const rows = await this.reader.query<Row[]>(
      `SELECT position, holder, lease_until, applied_at FROM ${quote(STATE_TABLE)} WHERE id = 1`,
    );
    const row = rows[0];
    return {
      position: Number(row?.position ?? 0),
      holder: (row?.holder as string | null) ?? null,
      leaseUntil: (row?.lease_until as string | null) ?? null,
      appliedAt: typeof row?.applied_at === 'string' ? `${row.applied_at.replace(' ', 'T')}Z` : null,
    };
  }

  /** Runs `work` in a transaction on the locked state row; false (rolled back) if `holder` does not hold it. */
  private async locked(holder: string, leaseMs: number, work: (held: boolean) => Promise<boolean>): Promise<boolean> {
    await this.query('START TRANSACTION');
    try {
      const rows = await this.query<Row[]>(
        `SELECT holder, lease_until > NOW(6) AS live FROM ${quote(STATE_TABLE)} WHERE id = 1 FOR UPDATE`,
      );
      if (rows.length === 0) {
        await this.query(`INSERT INTO ${quote(STATE_TABLE)} (id, position) VALUES (1, 0)`);
      }
      const held = rows[0]?.holder === holder;
      const free = !rows[0] || rows[0].holder === null || Number(rows[0].live) !== 1;
      if (!(await work(held || free))) {
        await this.query('ROLLBACK');
        return false;
      }
      await this.query(
        `UPDATE ${quote(STATE_TABLE)} SET holder = ?, lease_until = NOW(6) + INTERVAL ? MICROSECOND WHERE id = 1`,
        [holder, leaseMs * 1000],
      );
      await this.query('COMMIT');
      return true;
    } catch (error) {
      this.writer.drop(); // a transaction left open is rolled back by the server when the connection goes
      throw refusal(error);
    }
  }

  /** Takes the lease if it is free or expired, or renews it; true if `holder` holds it now. */
  lease(holder: string, leaseMs: number): Promise<boolean> {
    return this.locked(holder, leaseMs, async (mayHold) => mayHold);
  }

  /** Gives the lease up (a clean stop): another instance takes over at once. */
  async release(holder: string): Promise<void> {
    await this.query(`UPDATE ${quote(STATE_TABLE)} SET holder = NULL WHERE id = 1 AND holder = ?`, [holder]);
  }

  /**
   * Runs `work` and moves the position to `position`, in one transaction, if `holder` holds the lease
   * (else nothing, and false).
   */
  async apply(holder: string, leaseMs: number, position: number, work: TableWork): Promise<boolean> {
    return this.locked(holder, leaseMs, async (held) => {
      if (!held) return false;
      await work(this.transaction());
      await this.query(`UPDATE ${quote(STATE_TABLE)} SET position = ?, applied_at = NOW(6) WHERE id = 1`, [position]);
      return true;
    });
  }

  /** Runs `work` whoever holds the lease, in a transaction that locks the state row: never within a batch. */
  async overwrite(work: TableWork): Promise<void> {
    await this.query('START TRANSACTION');
    try {
      await this.query(`SELECT id FROM ${quote(STATE_TABLE)} WHERE id = 1 FOR UPDATE`);
      await work(this.transaction());
      await this.query('COMMIT');
    } catch (error) {
      this.writer.drop();
      throw refusal(error);
    }
  }

  /** The reads and writes of the transaction open on this connection. */
  private transaction(): TableTransaction {
    const has = (table: string, column?: string) =>
      this.columns.has(table) && (column === undefined || this.columns.get(table)!.has(column));
    const known = (table: string, row: Row) => Object.keys(row).filter((column) => has(table, column));
    return {
      has,
      rows: async (table, column, values) => {
        const rows: Row[] = [];
        for (let start = 0; start < values.length; start += CHUNK) {
          const chunk = values.slice(start, start + CHUNK);
          const sql = `SELECT * FROM ${quote(table)} WHERE ${quote(column)} IN (?) ORDER BY id FOR UPDATE`;
          rows.push(...(await this.query<Row[]>(sql, [chunk])));
        }
        return rows;
      },
      all: (table) => this.query<Row[]>(`SELECT * FROM ${quote(table)} ORDER BY id FOR UPDATE`),
      holders: async (table, columns, tuples) => {
        const rows: Row[] = [];
        const key = `(${columns.map(quote).join(', ')})`;
        for (let start = 0; start < tuples.length; start += CHUNK) {
          const chunk = tuples.slice(start, start + CHUNK);
          rows.push(...(await this.query<Row[]>(`SELECT * FROM ${quote(table)} WHERE ${key} IN (?)`, [chunk])));
        }
        return rows;
      },
      insert: async (table, rows) => {
        if (rows.length === 0) return;
        const columns = known(table, rows[0]!);
        for (let start = 0; start < rows.length; start += CHUNK) {
          const values = rows.slice(start, start + CHUNK).map((row) => columns.map((c) => row[c]));
          await this.query(`INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ?`, [values]);
        }
      },
      update: async (table, rows) => {
        for (const [columns, group] of bySameColumns(rows, (set) => known(table, set))) {
          for (let start = 0; start < group.length; start += CHUNK) {
            await this.query(...updateOf(table, columns, group.slice(start, start + CHUNK)));
          }
        }
      },
      remove: async (table, column, values) => {
        for (let start = 0; start < values.length; start += CHUNK) {
          const chunk = values.slice(start, start + CHUNK);
          await this.query(`DELETE FROM ${quote(table)} WHERE ${quote(column)} IN (?)`, [chunk]);
        }
      },
    };
  }

  /** The rows of a table (all, or those of `ids`), in id order. */
  async rows(table: string, ids?: number[]): Promise<Row[]> {
    if (!(await this.hasTable(table))) return [];
    if (ids && ids.length === 0) return [];
    const where = ids ? ' WHERE id IN (?)' : '';
    return this.reader.query<Row[]>(`SELECT * FROM ${quote(table)}${where} ORDER BY id`, ids ? [ids] : []);
  }

  async nextIds(tables: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.reader.query<{ t: string; next: number | null }[]>(
      'SELECT TABLE_NAME AS t, AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?)',
      [tables],
    );
    return new Map(rows.map((row) => [row.t, Number(row.next ?? 1)]));
  }

  /** Per table: the row count and two sums of CRC32s of its rows (id and `columns`), in one query. */
  async fingerprint(columns: Record<string, readonly string[]>): Promise<string> {
    await this.known();
    const parts: string[] = [];
    const names: string[] = [];
    for (const [table, wanted] of Object.entries(columns)) {
      const present = wanted.filter((c) => this.columns.get(table)?.has(c));
      if (present.length === 0) continue;
      const row = `CRC32(CONCAT_WS(0x1f, ${['id', ...present].map((c) => `IFNULL(${quote(c)}, 0x00)`).join(', ')}))`;
      parts.push(`SELECT ? AS t, COUNT(*) AS n, BIT_XOR(${row}) AS x, SUM(${row}) AS s FROM ${quote(table)}`);
      names.push(table);
    }
    if (parts.length === 0) return '';
    const rows = await this.reader.query<Row[]>(parts.join(' UNION ALL '), names);
    return rows.map((row) => `${row.t}:${row.n}:${row.x}:${row.s}`).join('|');
  }
}

/** A value PmaControl's tables refused (the batch cannot be applied as it is), as the wing names it. */
function refusal(error: unknown): unknown {
  const { errno, sqlMessage } = error as { errno?: number; sqlMessage?: string };
  return REFUSED_VALUE.has(errno ?? 0) ? new Blocked(`PmaControl's database refused a row: ${sqlMessage}`) : error;
}
