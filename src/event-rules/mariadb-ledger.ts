import { readFileSync } from 'node:fs';
import mysql, { type Pool, type PoolConnection } from 'mysql2/promise';
import type { MariadbConfig } from '../config.js';
import { DeliveryLedger, ledgerSchema, type SqlConnection } from './ledger.js';

/** Statements over one connection or the pool. */
function runner(target: Pool | PoolConnection): Omit<SqlConnection, 'transaction' | 'close'> {
  return {
    run: async (sql, params = []) => {
      const [result] = await target.query(sql, params);
      return { changes: (result as mysql.ResultSetHeader).affectedRows };
    },
    all: async <T>(sql: string, params: unknown[] = []) => {
      const [rows] = await target.query(sql, params);
      return rows as T[];
    },
  };
}

/**
 * The ledger in the event store's own MariaDB database (tables `event_rule_*`): every instance of
 * the store sees the same cursors and lease, whichever instance delivers.
 */
export function mariadbLedger(settings: MariadbConfig): DeliveryLedger {
  const pool = mysql.createPool({
    uri: settings.url.replace(/^mariadb:/, 'mysql:'),
    connectionLimit: 4,
    connectTimeout: Math.min(5000, settings.queryTimeoutMs),
    supportBigNumbers: true,
    bigNumberStrings: false,
    enableKeepAlive: true,
    ssl: settings.tls ? { ca: settings.caFile ? readFileSync(settings.caFile) : undefined } : undefined,
  });
  // An idle connection the server closed is an event on the pool, not a crash of the process.
  pool.on('connection', (connection) => {
    (connection as unknown as { on(event: string, listener: () => void): void }).on('error', () => {});
  });
  const connection: SqlConnection = {
    ...runner(pool),
    transaction: async (work) => {
      const held = await pool.getConnection();
      try {
        await held.beginTransaction();
        const inside: SqlConnection = { ...runner(held), transaction: (more) => more(inside), close: async () => {} };
        const result = await work(inside);
        await held.commit();
        return result;
      } catch (error) {
        await held.rollback().catch(() => {});
        throw error;
      } finally {
        held.release();
      }
    },
    close: () => pool.end(),
  };
  return new DeliveryLedger(connection, { insertIgnore: 'INSERT IGNORE', schema: ledgerSchema('mariadb') });
}
