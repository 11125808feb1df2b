import { type Connection, createConnection } from 'mysql2/promise';
import type { EntryWrite, PmaControlDatabase, ProjectionState } from './database.js';
import { STATE_TABLE } from './database.js';
import type { LinkRows, Row } from './rows.js';

/**
 * The adapter of PmaControlDatabase (database.ts) over MariaDB/MySQL (mysql2): PmaControl's own
 * database as a read model, its tables written as the entries are, and, in a table of this service's,
 * the position applied and which instance applies (a lease). Every batch is one transaction that
 * checks the lease, writes the rows and moves the position: a crash, an outage or a change of
 * instance resumes exactly where the last commit left it.
 */

/** MariaDB's duplicate-key error. */
const ER_DUP_ENTRY = 1062;

const quote = (name: string) => `\`${name.replace(/`/g, '``')}\``;

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

export class MariadbPmaControlDatabase implements PmaControlDatabase {
  private connection?: Connection;
  /** The columns each table has, read once per connection: an older PmaControl lacks some. */
  private readonly columns = new Map<string, Set<string>>();

  constructor(
    private readonly url: string,
    private readonly queryTimeoutMs = 5000,
  ) {}

  private async connected(): Promise<Connection> {
    if (this.connection) return this.connection;
    const connection = await createConnection({
      uri: this.url,
      connectTimeout: this.queryTimeoutMs,
      dateStrings: true,
      timezone: 'Z',
    });
    try {
      // The log keeps references whole at the end of each batch; rows are written in one order per batch.
      await connection.query("SET SESSION foreign_key_checks = 0, time_zone = '+00:00'");
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
    connection.on('error', () => this.drop());
    this.connection = connection;
    return connection;
  }

  /** Forgets the connection (after an error): the next call connects again. */
  drop(): void {
    this.connection?.destroy();
    this.connection = undefined;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await connection?.end().catch(() => connection.destroy());
  }

  private async query<T>(sql: string, values?: unknown[]): Promise<T> {
    const connection = await this.connected();
    try {
      const [rows] = await connection.query({ sql, values, timeout: this.queryTimeoutMs });
      return rows as T;
    } catch (error) {
      this.drop();
      throw error;
    }
  }

  /** Whether the table exists in PmaControl's database. */
  async hasTable(table: string): Promise<boolean> {
    await this.connected();
    return this.columns.has(table);
  }

  async state(): Promise<ProjectionState> {
    const rows = await this.query<Row[]>(
      `SELECT position, holder, lease_until, applied_at FROM ${quote(STATE_TABLE)} WHERE id = 1`,
    );
    const row = rows[0];
    return {
      position: Number(row?.position ?? 0),
      holder: (row?.holder as string | null) ?? null,
      leaseUntil: (row?.lease_until as string | null) ?? null,
      appliedAt: (row?.applied_at as string | null) ?? null,
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
      this.drop(); // a transaction left open is rolled back by the server when the connection goes
      throw error;
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
   * Writes a batch and moves the position to `position`, in one transaction, if `holder` holds the
   * lease (else nothing, and false): rows deleted, then rows written (columns PmaControl's table does
   * not have are left out; columns this service does not keep are left as they are), then link rows.
   */
  async apply(holder: string, leaseMs: number, position: number, writes: EntryWrite[]): Promise<boolean> {
    const run = (park: boolean) =>
      this.locked(holder, leaseMs, async (held) => {
        if (!held) return false;
        await this.write(writes, park);
        await this.query(`UPDATE ${quote(STATE_TABLE)} SET position = ?, applied_at = NOW(6) WHERE id = 1`, [position]);
        return true;
      });
    try {
      return await run(false);
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_DUP_ENTRY) throw error;
      return run(true); // values that moved between rows of the batch (two names swapped)
    }
  }

  /**
   * Writes rows as the service has them, whoever holds the lease (an overwrite of drift), in one
   * transaction that locks the state row: it never interleaves with a batch being applied.
   */
  async overwrite(writes: EntryWrite[]): Promise<void> {
    await this.query('START TRANSACTION');
    try {
      await this.query(`SELECT id FROM ${quote(STATE_TABLE)} WHERE id = 1 FOR UPDATE`);
      await this.write(writes, true);
      await this.query('COMMIT');
    } catch (error) {
      this.drop();
      throw error;
    }
  }

  /**
   * Deletes, then upserts, then link rows. `park`: the unique values of the rows about to be written
   * are first set aside (their first text column made `\u0001<id>`), so that a value moving from one
   * row to another within the batch never meets itself on the way.
   */
  private async write(writes: EntryWrite[], park = false): Promise<void> {
    for (const [table, ids] of groupBy(writes.filter((w) => !w.row))) {
      await this.query(`DELETE FROM ${quote(table)} WHERE id IN (?)`, [ids.map((w) => w.id)]);
    }
    if (park) {
      for (const [table, rows] of groupBy(writes.filter((w) => w.row))) {
        const columns = [...new Set((rows[0]!.kept.resource.declaration.unique ?? []).map((key) => key.fields[0]!))];
        const set = columns
          .filter((c) => this.columns.get(table)?.has(c))
          .map((c) => `${quote(c)} = CONCAT(CHAR(1), id)`);
        if (set.length === 0) continue;
        await this.query(`UPDATE ${quote(table)} SET ${set.join(', ')} WHERE id IN (?)`, [rows.map((w) => w.id)]);
      }
    }
    for (const [table, rows] of groupBy(writes.filter((w) => w.row))) await this.upsert(table, rows);
    await this.links(writes);
  }

  private async upsert(table: string, writes: EntryWrite[]): Promise<void> {
    const has = this.columns.get(table);
    if (!has) throw new Error(`PmaControl's database has no table ${table}`);
    const columns = Object.keys(writes[0]!.row!).filter((column) => has.has(column));
    const update = columns.filter((c) => c !== 'id').map((c) => `${quote(c)} = VALUES(${quote(c)})`);
    for (let start = 0; start < writes.length; start += CHUNK) {
      const values = writes.slice(start, start + CHUNK).map((w) => columns.map((c) => w.row![c]));
      await this.query(
        `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ? ON DUPLICATE KEY UPDATE ${update.join(', ')}`,
        [values],
      );
    }
  }

  /** Each written or deleted entry's link rows replaced by the ones it holds now. */
  private async links(writes: EntryWrite[]): Promise<void> {
    const byTable = new Map<string, { link: LinkRows['link']; owners: number[]; pairs: [number, number][] }>();
    for (const write of writes) {
      for (const link of Object.values(write.kept.table.links ?? {})) {
        const entry = byTable.get(link.table) ?? { link, owners: [], pairs: [] };
        entry.owners.push(write.id);
        const held = write.links.find((l) => l.link.table === link.table)?.ids ?? [];
        for (const id of held) entry.pairs.push([write.id, id]);
        byTable.set(link.table, entry);
      }
    }
    for (const [table, { link, owners, pairs }] of byTable) {
      if (!this.columns.has(table)) continue;
      for (let start = 0; start < owners.length; start += CHUNK) {
        const chunk = owners.slice(start, start + CHUNK);
        await this.query(`DELETE FROM ${quote(table)} WHERE ${quote(link.owner)} IN (?)`, [chunk]);
      }
      for (let start = 0; start < pairs.length; start += CHUNK) {
        await this.query(`INSERT INTO ${quote(table)} (${quote(link.owner)}, ${quote(link.target)}) VALUES ?`, [
          pairs.slice(start, start + CHUNK),
        ]);
      }
    }
  }

  /** The rows of a table (all, or those of `ids`), in id order. */
  async rows(table: string, ids?: number[]): Promise<Row[]> {
    if (!(await this.hasTable(table))) return [];
    if (ids && ids.length === 0) return [];
    const where = ids ? ' WHERE id IN (?)' : '';
    return this.query<Row[]>(`SELECT * FROM ${quote(table)}${where} ORDER BY id`, ids ? [ids] : []);
  }
}

/** Writes by table, in the order they came. */
function groupBy(writes: EntryWrite[]): Map<string, EntryWrite[]> {
  const groups = new Map<string, EntryWrite[]>();
  for (const write of writes) {
    const group = groups.get(write.kept.table.table);
    if (group) group.push(write);
    else groups.set(write.kept.table.table, [write]);
  }
  return groups;
}
