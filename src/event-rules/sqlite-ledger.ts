import { join } from 'node:path';
import type { Statement } from 'better-sqlite3';
import Database from '../sqlite/driver.js';
import { DeliveryLedger, ledgerSchema, type SqlConnection } from './ledger.js';

/**
 * The ledger in DATA_DIR/event-rules.sqlite (the SQLite and EventStoreDB stores): beside the log,
 * never in the read models (a replay replaces those). Every instance of the DATA_DIR shares it; the
 * lease says which one delivers.
 */
export function sqliteLedger(dataDir: string): DeliveryLedger {
  const db = new Database(join(dataDir, 'event-rules.sqlite'));
  db.pragma('journal_mode = WAL');
  // NORMAL: a commit is not synced on its own (WAL); a crash of the process loses nothing, a loss of
  // power may lose the last outcomes recorded — those changes are sent again (at least once), never
  // skipped. A sync per delivery cost more than the delivery (bench/webhooks.ts).
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  // The statements of a transaction run on the one connection between awaits: whatever else asks
  // meanwhile (another rule's worker) waits for the transaction's end.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  // A statement is compiled once (a delivery records its outcome with the same few).
  const statements = new Map<string, Statement<unknown[]>>();
  const statement = (sql: string): Statement<unknown[]> => {
    const known = statements.get(sql);
    if (known) return known;
    const made = db.prepare<unknown[]>(sql);
    statements.set(sql, made);
    return made;
  };
  const inside: SqlConnection = {
    run: async (sql, params = []) => ({ changes: statement(sql).run(...params).changes }),
    all: async <T>(sql: string, params: unknown[] = []) => statement(sql).all(...params) as T[],
    transaction: (work) => work(inside),
    close: async () => {},
  };
  const connection: SqlConnection = {
    run: (sql, params) => exclusive(() => inside.run(sql, params)),
    all: <T>(sql: string, params?: unknown[]) => exclusive(() => inside.all<T>(sql, params)),
    transaction: (work) =>
      exclusive(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await work(inside);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: () =>
      exclusive(async () => {
        db.close();
      }),
  };
  return new DeliveryLedger(connection, { insertIgnore: 'INSERT OR IGNORE', schema: ledgerSchema('sqlite') });
}
