import type BetterSqlite3 from 'better-sqlite3';
import Database from '../../sqlite/driver.js';
import type { RowDifference } from '../port.js';
import { COMPARED } from './file-reads.js';
import { CONSISTENT_AT } from './save-jobs.js';

/**
 * The rows that differ between a read-model file and a rebuild of it, both read in key order in
 * SQLite's raw mode (arrays, not objects) and compared value by value, a JSON string made only for a
 * row that differs. Reading them as objects with a JSON string per row took as long as the rebuild
 * itself (a 300,000-event history: 5.2 s of `replay --apply`'s 17 s; test/read-models/file-compare.test.ts
 * times neither, it checks both ways find the same rows). No temporary space: a comparison by SQL
 * (`EXCEPT`) sorts each table of one side into a temporary tree first.
 *
 * Before that walk, SQLite itself tells whether a table is the same in both files — as many rows on
 * each side, and as many of them met by their primary key with every compared value the same — and
 * only a table that is not is walked: the rows are then read by no JavaScript at all. On a
 * 2,000,000-event history (`npm run bench:history`) the walk of equal files took 17.5 s of `replay`.
 */

/** SQLite's order of values in a key: null, numbers, text by its UTF-8 bytes, blobs by their bytes. */
function compareValues(p: unknown, q: unknown): number {
  if (p === q) return 0;
  const rank = (v: unknown) => (v === null ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 3);
  const [r, t] = [rank(p), rank(q)];
  if (r !== t) return r - t;
  if (r === 1) return (p as number) - (q as number);
  if (r === 2) return Buffer.compare(Buffer.from(p as string), Buffer.from(q as string));
  return Buffer.compare(p as Uint8Array, q as Uint8Array);
}

/** Whether two values are the same stored value (blobs by their bytes). */
const same = (p: unknown, q: unknown) =>
  p === q || (p instanceof Uint8Array && q instanceof Uint8Array && Buffer.compare(p, q) === 0);

type Row = unknown[];

/** The rows a table's comparison reads: the list snapshots' bookkeeping and a rebuild's last consistent point are not compared (file-reads.ts). */
const kept = (table: string, as = '') =>
  table === 'meta' ? ` WHERE substr(${as}name, 1, 5) <> 'list:' AND ${as}name <> '${CONSISTENT_AT}'` : '';

/**
 * Whether `table` holds the same rows in `rebuilt` and in the file attached to it as `stored`:
 * as many on each side, each met by its primary key on the other with its compared values the same.
 */
function sameTable(rebuilt: BetterSqlite3.Database, table: string, columns: string[]): boolean {
  const key = rebuilt
    .prepare<[string], string>('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk')
    .pluck()
    .all(table);
  const count = (from: string) =>
    rebuilt
      .prepare(`SELECT count(*) FROM ${from}${kept(table)}`)
      .pluck()
      .get();
  const rows = count(`main.${table}`);
  if (rows !== count(`stored.${table}`)) return false;
  const plain = columns.map((column) => column.replace(/^hex\((\w+)\)$/, '$1'));
  const met = key.map((column) => `s.${column} = r.${column}`).join(' AND ');
  const alike = plain.filter((column) => !key.includes(column)).map((column) => ` AND s.${column} IS r.${column}`);
  const where = kept(table, 'r.') || ' WHERE 1';
  const sql = `SELECT count(*) FROM main.${table} r JOIN stored.${table} s ON ${met}${where}${alike.join('')}`;
  return rebuilt.prepare(sql).pluck().get() === rows;
}

/** The rows of `stored` and `rebuilt` (two read-model files) that differ, table by table in key order. */
export function fileDifferences(stored: BetterSqlite3.Database, rebuilt: BetterSqlite3.Database): RowDifference[] {
  const attached = stored.name !== ':memory:' && stored.name !== '';
  if (attached) rebuilt.prepare('ATTACH DATABASE ? AS stored').run(stored.name);
  try {
    return COMPARED.flatMap(([table, keys, values]) => {
      if (attached && sameTable(rebuilt, table, [...keys, ...values])) return [];
      const sql = `SELECT ${[...keys, ...values].join(', ')} FROM ${table}${kept(table)} ORDER BY ${keys.join(', ')}`;
      const rows = (db: BetterSqlite3.Database) => db.prepare(sql).raw().iterate() as IterableIterator<Row>;
      return walk(table, keys.length, rows(rebuilt), rows(stored));
    });
  } finally {
    if (attached) rebuilt.exec('DETACH DATABASE stored');
  }
}

/** `stored`'s rows against those of the file at `rebuilt`, read on a connection of its own. */
export function differencesFrom(stored: BetterSqlite3.Database, rebuilt: string): RowDifference[] {
  const other = new Database(rebuilt, { readonly: true });
  try {
    return fileDifferences(stored, other);
  } finally {
    other.close();
  }
}

/** How two sorted sequences are compared: their order, whether two at one key are the same, and how one is said. */
interface Stepping<T> {
  order(x: T, y: T): number;
  same(x: T, y: T): boolean;
  said(x: T): { table: string; key: string; value: string };
}

/** Two sequences in the same order, walked in step: what one has and the other has not, or has otherwise. */
function inStep<T>(a: Iterator<T>, b: Iterator<T>, how: Stepping<T>): RowDifference[] {
  const differences: RowDifference[] = [];
  try {
    let [x, y] = [a.next().value as T | undefined, b.next().value as T | undefined];
    while (x !== undefined || y !== undefined) {
      const step = y === undefined ? -1 : x === undefined ? 1 : how.order(x, y);
      if (step !== 0 || !how.same(x!, y!)) {
        const { table, key } = how.said((step <= 0 ? x : y)!);
        differences.push({
          table,
          key,
          ...(step <= 0 ? { rebuilt: how.said(x!).value } : {}),
          ...(step >= 0 ? { stored: how.said(y!).value } : {}),
        });
      }
      if (step <= 0) x = a.next().value as T | undefined;
      if (step >= 0) y = b.next().value as T | undefined;
    }
  } finally {
    // A read that failed half-way leaves the other file's query open, which would keep it from closing.
    a.return?.();
    b.return?.();
  }
  return differences;
}

/** Two tables' rows in key order, walked in step. */
function walk(table: string, width: number, a: IterableIterator<Row>, b: IterableIterator<Row>): RowDifference[] {
  return inStep(a, b, {
    order: (x, y) => {
      for (let i = 0; i < width; i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return 0;
    },
    same: (x, y) => x.every((v, i) => i < width || same(v, y[i])),
    said: (row) => ({ table, key: row.slice(0, width).join('/'), value: JSON.stringify(row.slice(width)) }),
  });
}

type Line = { table: string; key: string; value: string };

/** Orders two lines' keys as `fileLines` lists them: part by part, numbers as numbers. */
function compareLineKeys(a: string, b: string): number {
  const [x, y] = [a.split('/'), b.split('/')];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const [p, q] = [x[i] ?? '', y[i] ?? ''];
    if (p === q) continue;
    const numeric = /^-?\d+$/.test(p) && /^-?\d+$/.test(q);
    return numeric ? Number(p) - Number(q) : p < q ? -1 : 1;
  }
  return 0;
}

/**
 * The same differences from two stores' lines read in step (`fileLines`): for a store that is not a
 * file another connection can read (`:memory:`).
 */
export function linesDifferences(rebuilt: Iterable<Line>, stored: Iterable<Line>): RowDifference[] {
  const tables = COMPARED.map(([table]) => table);
  return inStep(rebuilt[Symbol.iterator](), stored[Symbol.iterator](), {
    order: (p, q) => tables.indexOf(p.table) - tables.indexOf(q.table) || compareLineKeys(p.key, q.key),
    same: (p, q) => p.value === q.value,
    said: (line) => line,
  });
}
