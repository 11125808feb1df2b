/**
 * Where event rules keep their deliveries (section 15): each rule's cursor (every matching change up
 * to it is delivered or dead), each delivery's state, and which instance delivers (a lease). It lives
 * where every instance sees it — beside the log: in the MariaDB database of the event store, or in a
 * SQLite file of DATA_DIR — and never in the read models, which a replay replaces.
 *
 * One implementation over a small SQL connection (`SqlConnection`); the adapters give the
 * connection and the dialect (sqlite-ledger.ts, mariadb-ledger.ts).
 */

import {
  COLUMNS,
  type Delivery,
  type DeliveryState,
  type Dialect,
  deliveryOf,
  progressOf,
  REPLAYED,
  type RuleProgress,
  type SqlConnection,
} from './ledger-rows.js';

export {
  DELIVERY_STATES,
  type Delivery,
  type DeliveryState,
  ledgerSchema,
  REPLAYED,
  type RuleProgress,
  type SqlConnection,
} from './ledger-rows.js';

/** The ledger of every instance, over one SQL connection. */
export class DeliveryLedger {
  private ready?: Promise<void>;

  constructor(
    private readonly sql: SqlConnection,
    private readonly dialect: Dialect,
  ) {}

  /** The tables made, and the lease's row, once. */
  private prepared(): Promise<void> {
    this.ready ??= (async () => {
      for (const statement of this.dialect.schema) await this.sql.run(statement);
      await this.sql.run(
        `${this.dialect.insertIgnore} INTO event_rule_lease (id, holder, until_ms) VALUES (1, NULL, 0)`,
      );
    })().catch((error) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** Takes or renews the lease until `now + leaseMs`; false while another instance holds it. */
  async lease(holder: string, leaseMs: number, now = Date.now()): Promise<boolean> {
    await this.prepared();
    const { changes } = await this.sql.run(
      'UPDATE event_rule_lease SET holder = ?, until_ms = ? WHERE id = 1 AND (holder = ? OR holder IS NULL OR until_ms < ?)',
      [holder, now + leaseMs, holder, now],
    );
    return changes > 0;
  }

  async release(holder: string): Promise<void> {
    await this.prepared();
    await this.sql.run('UPDATE event_rule_lease SET holder = NULL, until_ms = 0 WHERE id = 1 AND holder = ?', [holder]);
  }

  /** Who holds the lease now, if anyone. */
  async holder(now = Date.now()): Promise<string | undefined> {
    await this.prepared();
    const rows = await this.sql.all<{ holder: string | null; until_ms: number }>(
      'SELECT holder, until_ms FROM event_rule_lease WHERE id = 1',
    );
    const row = rows[0];
    return row?.holder && Number(row.until_ms) >= now ? row.holder : undefined;
  }

  async progress(rule: number): Promise<RuleProgress | undefined> {
    await this.prepared();
    const rows = await this.sql.all<Record<string, unknown>>(
      'SELECT rule, cursor_position, since_position, last_error, last_error_at FROM event_rule_cursors WHERE rule = ?',
      [rule],
    );
    return rows[0] ? progressOf(rows[0]) : undefined;
  }

  async allProgress(): Promise<RuleProgress[]> {
    await this.prepared();
    const rows = await this.sql.all<Record<string, unknown>>(
      'SELECT rule, cursor_position, since_position, last_error, last_error_at FROM event_rule_cursors',
    );
    return rows.map(progressOf);
  }

  /**
   * Moves a rule's cursor from `from` (undefined: no cursor yet) to `to`, made for the enabling at
   * `since`, only while `holder` holds the lease and the cursor is still `from` (a replay asked
   * meanwhile wins). False when either did not hold: the caller reads the cursor again.
   */
  async advance(holder: string, rule: number, from: number | undefined, to: number, since: number): Promise<boolean> {
    await this.prepared();
    return this.sql.transaction(async (sql) => {
      if (!(await holds(sql, holder))) return false;
      const moved =
        from === undefined
          ? await sql.run(
              `${this.dialect.insertIgnore} INTO event_rule_cursors (rule, cursor_position, since_position) VALUES (?, ?, ?)`,
              [rule, to, since],
            )
          : await sql.run(
              'UPDATE event_rule_cursors SET cursor_position = ?, since_position = ? WHERE rule = ? AND cursor_position = ?',
              [to, since, rule, from],
            );
      return moved.changes > 0;
    });
  }

  /**
   * Records an attempt's outcome while `holder` holds the lease; `redo`: a redelivery asked for that
   * is not done yet (retrying).
   */
  async record(holder: string, delivery: Delivery, redo = false): Promise<boolean> {
    await this.prepared();
    return this.sql.transaction(async (sql) => {
      if (!(await holds(sql, holder))) return false;
      await writeDelivery(sql, delivery, delivery.state === 'delivered' ? null : delivery.last_error, redo);
      return true;
    });
  }

  async deliveries(rule: number, state: DeliveryState | undefined, after: number, limit: number): Promise<Delivery[]> {
    await this.prepared();
    const filter = state ? ' AND state = ?' : '';
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM event_rule_deliveries WHERE rule = ? AND position > ?${filter} ORDER BY position LIMIT ${limit}`,
      state ? [rule, after, state] : [rule, after],
    );
    return rows.map(deliveryOf);
  }

  async delivery(rule: number, position: number): Promise<Delivery | undefined> {
    await this.prepared();
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM event_rule_deliveries WHERE rule = ? AND position = ?`,
      [rule, position],
    );
    return rows[0] ? deliveryOf(rows[0]) : undefined;
  }

  /**
   * The deliveries of a rule recorded after `after`, up to `to` (redeliveries asked for left out): the
   * delivered and dead ones are not sent again after a restart; a retrying one goes on with its attempts.
   */
  async between(rule: number, after: number, to: number): Promise<Map<number, Delivery>> {
    await this.prepared();
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM event_rule_deliveries WHERE rule = ? AND position > ? AND position <= ? AND redo = 0`,
      [rule, after, to],
    );
    return new Map(rows.map((row) => [Number(row.position), deliveryOf(row)]));
  }

  /**
   * Forgets a rule's delivered changes but the latest `keep` (those retrying, dead or asked for again
   * stay): the list of deliveries stays bounded where a rule delivers every change.
   */
  async prune(rule: number, keep: number): Promise<void> {
    await this.prepared();
    const rows = await this.sql.all<{ position: number }>(
      `SELECT position FROM event_rule_deliveries WHERE rule = ? AND state = 'delivered' AND redo = 0 ORDER BY position DESC LIMIT 1 OFFSET ${keep}`,
      [rule],
    );
    if (rows.length === 0) return;
    await this.sql.run(
      "DELETE FROM event_rule_deliveries WHERE rule = ? AND state = 'delivered' AND redo = 0 AND position <= ?",
      [rule, Number(rows[0].position)],
    );
  }

  /** Asks for a change to be sent again (any instance may ask; the holder sends it). */
  async redeliver(rule: number, position: number, now: Date): Promise<void> {
    await this.prepared();
    await this.sql.transaction(async (sql) => {
      const changed = await sql.run(
        "UPDATE event_rule_deliveries SET redo = 1, state = 'pending', attempts = 0, next_at = ?, first_at = NULL WHERE rule = ? AND position = ?",
        [now.toISOString(), rule, position],
      );
      if (changed.changes === 0) {
        await sql.run(
          `INSERT INTO event_rule_deliveries (${COLUMNS}, redo) VALUES (?, ?, 'pending', 0, NULL, NULL, ?, NULL, 1)`,
          [rule, position, now.toISOString()],
        );
      }
    });
  }

  /** The redeliveries asked for and not yet done, oldest first. */
  async redeliveries(limit: number): Promise<Delivery[]> {
    await this.prepared();
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM event_rule_deliveries WHERE redo = 1 ORDER BY next_at, rule, position LIMIT ${limit}`,
    );
    return rows.map(deliveryOf);
  }

  /**
   * Sets a rule's cursor (a replay from `from`: cursor `from - 1`), whoever holds the lease; marked
   * REPLAYED, so that the worker starts there even before the rule's enabling.
   */
  async rewind(rule: number, cursor: number): Promise<void> {
    await this.prepared();
    await this.sql.transaction(async (sql) => {
      const moved = await sql.run(
        'UPDATE event_rule_cursors SET cursor_position = ?, since_position = ? WHERE rule = ?',
        [cursor, REPLAYED, rule],
      );
      if (moved.changes === 0)
        await sql.run('INSERT INTO event_rule_cursors (rule, cursor_position, since_position) VALUES (?, ?, ?)', [
          rule,
          cursor,
          REPLAYED,
        ]);
      await sql.run('DELETE FROM event_rule_deliveries WHERE rule = ? AND position > ? AND redo = 0', [rule, cursor]);
    });
  }

  close(): Promise<void> {
    return this.sql.close();
  }
}

async function holds(sql: SqlConnection, holder: string): Promise<boolean> {
  const rows = await sql.all<{ holder: string | null }>('SELECT holder FROM event_rule_lease WHERE id = 1', []);
  return rows[0]?.holder === holder;
}

/** Writes a delivery's row and, with an error, the rule's last error. */
async function writeDelivery(sql: SqlConnection, d: Delivery, error: string | null, redo = false): Promise<void> {
  await sql.run('DELETE FROM event_rule_deliveries WHERE rule = ? AND position = ?', [d.rule, d.position]);
  await sql.run(`INSERT INTO event_rule_deliveries (${COLUMNS}, redo) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    d.rule,
    d.position,
    d.state,
    d.attempts,
    d.last_status,
    d.last_error,
    d.next_at,
    d.first_at,
    redo ? 1 : 0,
  ]);
  if (error !== null)
    await sql.run('UPDATE event_rule_cursors SET last_error = ?, last_error_at = ? WHERE rule = ?', [
      error,
      new Date().toISOString(),
      d.rule,
    ]);
}
