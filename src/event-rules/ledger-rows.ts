/** The ledger's rows and tables, in either dialect: what ledger.ts keeps and reads. */

export type DeliveryState = 'pending' | 'delivered' | 'retrying' | 'dead';
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivered', 'retrying', 'dead'];

export interface Delivery {
  rule: number;
  position: number;
  state: DeliveryState;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  /** When the next attempt is due (ISO 8601), or null. */
  next_at: string | null;
  /** When the first attempt was made (ISO 8601): `WEBHOOK_GIVE_UP_AFTER` counts from it. */
  first_at: string | null;
}

export interface RuleProgress {
  rule: number;
  /** Every matching change at or before this position is delivered or dead. */
  cursor: number;
  /** The position of the change that enabled the rule when the cursor was set from it (a later enabling moves it). */
  since: number | null;
  last_error: string | null;
  last_error_at: string | null;
}

/** A statement runner: `?` placeholders, numbers and strings. */
export interface SqlConnection {
  run(sql: string, params?: unknown[]): Promise<{ changes: number }>;
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs `work` in one transaction (committed when it resolves, rolled back when it throws). */
  transaction<T>(work: (sql: SqlConnection) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface Dialect {
  /** `INSERT OR IGNORE` (SQLite) or `INSERT IGNORE` (MariaDB). */
  insertIgnore: string;
  /** The statements that make the tables, if they do not exist. */
  schema: string[];
}

const TEXT = (dialect: 'sqlite' | 'mariadb', length: number) =>
  dialect === 'sqlite' ? 'TEXT' : `VARCHAR(${length}) CHARACTER SET utf8mb4`;

/** The tables, in either dialect. */
export function ledgerSchema(dialect: 'sqlite' | 'mariadb'): string[] {
  const engine = dialect === 'mariadb' ? ' ENGINE=InnoDB' : '';
  return [
    `CREATE TABLE IF NOT EXISTS event_rule_lease (id INTEGER NOT NULL PRIMARY KEY, holder ${TEXT(dialect, 200)} NULL, until_ms BIGINT NOT NULL)${engine}`,
    `CREATE TABLE IF NOT EXISTS event_rule_cursors (rule BIGINT NOT NULL PRIMARY KEY, cursor_position BIGINT NOT NULL, since_position BIGINT NULL, last_error ${TEXT(dialect, 1000)} NULL, last_error_at ${TEXT(dialect, 40)} NULL)${engine}`,
    `CREATE TABLE IF NOT EXISTS event_rule_deliveries (rule BIGINT NOT NULL, position BIGINT NOT NULL, state ${TEXT(dialect, 16)} NOT NULL, attempts INTEGER NOT NULL, last_status INTEGER NULL, last_error ${TEXT(dialect, 1000)} NULL, next_at ${TEXT(dialect, 40)} NULL, first_at ${TEXT(dialect, 40)} NULL, redo INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (rule, position))${engine}`,
  ];
}

export const COLUMNS = 'rule, position, state, attempts, last_status, last_error, next_at, first_at';

/** The `since` of a cursor a replay set: kept as it is, whenever the rule was enabled. */
export const REPLAYED = -1;

export const progressOf = (row: Record<string, unknown>): RuleProgress => ({
  rule: Number(row.rule),
  cursor: Number(row.cursor_position),
  since: row.since_position === null || row.since_position === undefined ? null : Number(row.since_position),
  last_error: (row.last_error as string | null) ?? null,
  last_error_at: (row.last_error_at as string | null) ?? null,
});

export const deliveryOf = (row: Record<string, unknown>): Delivery => ({
  rule: Number(row.rule),
  position: Number(row.position),
  state: row.state as DeliveryState,
  attempts: Number(row.attempts),
  last_status: row.last_status === null ? null : Number(row.last_status),
  last_error: (row.last_error as string | null) ?? null,
  next_at: (row.next_at as string | null) ?? null,
  first_at: (row.first_at as string | null) ?? null,
});
