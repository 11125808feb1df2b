import type { Row } from './rows.js';

/**
 * PmaControl's own database as the wing sees it: its tables, and a table of this service's with the
 * position applied and the lease. The adapter over MariaDB/MySQL is mariadb-tables.ts; `main.ts`
 * makes it, and the projection, drift and commands know only these interfaces. What to write is
 * decided by the wing (table-writes.ts) inside the adapter's transaction, with the reads and writes
 * a TableTransaction offers.
 */

/** A batch that cannot be applied as PmaControl's tables are (a row in the way, a value refused): why. */
export class Blocked extends Error {
  override name = 'Blocked';
}

/** The service's own table in PmaControl's database. */
export const STATE_TABLE = 'pmacontrol_config_projection';

export interface ProjectionState {
  /** The last position applied; 0: nothing yet (the first batch writes every entry). */
  position: number;
  /** The instance that holds the lease, and until when. */
  holder: string | null;
  leaseUntil: string | null;
  /** When the last batch was applied, ISO 8601 in UTC. */
  appliedAt: string | null;
}

/** Reads and writes of PmaControl's tables within one transaction (rows read are locked until it ends). */
export interface TableTransaction {
  /** Whether PmaControl's database has the table (and the column): an older PmaControl lacks some. */
  has(table: string, column?: string): boolean;
  /** The rows whose `column` is one of `values`, in id order. */
  rows(table: string, column: string, values: readonly number[]): Promise<Row[]>;
  /** Every row of the table, in id order. */
  all(table: string): Promise<Row[]>;
  /** The rows whose `columns` hold one of `tuples`, compared as the table's collations compare. */
  holders(table: string, columns: readonly string[], tuples: readonly unknown[][]): Promise<Row[]>;
  insert(table: string, rows: readonly Row[]): Promise<void>;
  /** Sets, in each row of `id`, the columns of its `set` (rows that set the same columns in one statement). */
  update(table: string, rows: readonly { id: number; set: Row }[]): Promise<void>;
  /** Deletes the rows whose `column` is one of `values`. */
  remove(table: string, column: string, values: readonly number[]): Promise<void>;
}

/** The work of one transaction over PmaControl's tables. */
export type TableWork = (tx: TableTransaction) => Promise<void>;

export interface PmaControlDatabase {
  /** The position applied and the lease, as committed. */
  state(): Promise<ProjectionState>;
  /** Takes or renews the lease for `leaseMs`; false while another instance holds it. */
  lease(holder: string, leaseMs: number): Promise<boolean>;
  release(holder: string): Promise<void>;
  /**
   * Runs `work` and moves the position to `position`, in one transaction that checks the lease;
   * false (nothing written) when `holder` no longer holds it. An error thrown by `work` rolls it back.
   */
  apply(holder: string, leaseMs: number, position: number, work: TableWork): Promise<boolean>;
  /** Runs `work` in a transaction that never interleaves with a batch, the position unmoved (drift overwritten). */
  overwrite(work: TableWork): Promise<void>;
  /** A table's rows (those of `ids` only, if given), in id order. */
  rows(table: string, ids?: number[]): Promise<Row[]>;
  /** The id PmaControl gives the next row it inserts, by table (its AUTO_INCREMENT). */
  nextIds(tables: readonly string[]): Promise<Map<string, number>>;
  /**
   * What the tables hold, in a few bytes that change when any row does (row count and a checksum
   * per table): drift is computed again only when this, or the log, has moved.
   */
  fingerprint(columns: Record<string, readonly string[]>): Promise<string>;
  close(): Promise<void>;
}
