import type { Row } from './rows.js';

/** SQL text for PmaControl's tables over MariaDB (mariadb-tables.ts). */

/** A name as MariaDB quotes it. */
export const quote = (name: string) => `\`${name.replace(/`/g, '``')}\``;

/** Rows grouped by the columns they set (those the table has), in first-seen order. */
export function bySameColumns(rows: readonly { id: number; set: Row }[], known: (set: Row) => string[]) {
  const groups = new Map<string, [string[], { id: number; set: Row }[]]>();
  for (const row of rows) {
    const columns = known(row.set).filter((column) => column !== 'id');
    if (columns.length === 0) continue;
    const key = columns.join('\0');
    if (!groups.has(key)) groups.set(key, [columns, []]);
    groups.get(key)![1].push(row);
  }
  return groups.values();
}

/**
 * One UPDATE for many rows (bench/pmacontrol.ts, a backlog caught up): joined on id to a derived table
 * of the new values, so that it only ever changes rows that exist (they are locked by the batch).
 */
export function updateOf(table: string, columns: string[], rows: { id: number; set: Row }[]): [string, unknown[]] {
  const select = `SELECT ? AS id, ${columns.map((c) => `? AS ${quote(c)}`).join(', ')}`;
  const values = rows.map(() => select).join(' UNION ALL ');
  const assignments = columns.map((c) => `t.${quote(c)} = v.${quote(c)}`).join(', ');
  const sql = `UPDATE ${quote(table)} AS t JOIN (${values}) AS v ON t.id = v.id SET ${assignments}`;
  return [sql, rows.flatMap((row) => [row.id, ...columns.map((c) => row.set[c])])];
}
