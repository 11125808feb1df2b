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

/** The rows of `stored` and `rebuilt` (two read-model files) that differ, table by table in key order. */
export function fileDifferences(stored: BetterSqlite3.Database, rebuilt: BetterSqlite3.Database): RowDifference[] {
  return COMPARED.flatMap(([table, keys, values]) => {
    // The list snapshots' bookkeeping and a rebuild's last consistent point are not compared (file-reads.ts).
    const where = table === 'meta' ? ` WHERE substr(name, 1, 5) <> 'list:' AND name <> '${CONSISTENT_AT}'` : '';
    const sql = `SELECT ${[...keys, ...values].join(', ')} FROM ${table}${where} ORDER BY ${keys.join(', ')}`;
    const rows = (db: BetterSqlite3.Database) => db.prepare(sql).raw().iterate() as IterableIterator<Row>;
    return walk(table, keys.length, rows(rebuilt), rows(stored));
  });
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

/** Two tables' rows in key order, walked in step. */
function walk(table: string, width: number, a: IterableIterator<Row>, b: IterableIterator<Row>): RowDifference[] {
  const differences: RowDifference[] = [];
  const keyOrder = (x: Row, y: Row) => {
    for (let i = 0; i < width; i++) {
      const c = compareValues(x[i], y[i]);
      if (c !== 0) return c;
    }
    return 0;
  };
  const sameValues = (x: Row, y: Row) => x.every((v, i) => i < width || same(v, y[i]));
  const text = (row: Row) => JSON.stringify(row.slice(width));
  try {
    let [x, y] = [a.next().value as Row | undefined, b.next().value as Row | undefined];
    while (x || y) {
      const step = !y ? -1 : !x ? 1 : keyOrder(x, y);
      if (step !== 0 || !sameValues(x!, y!)) {
        const key = (step <= 0 ? x! : y!).slice(0, width).join('/');
        differences.push({
          table,
          key,
          ...(step <= 0 ? { rebuilt: text(x!) } : {}),
          ...(step >= 0 ? { stored: text(y!) } : {}),
        });
      }
      if (step <= 0) x = a.next().value as Row | undefined;
      if (step >= 0) y = b.next().value as Row | undefined;
    }
  } finally {
    a.return?.();
    b.return?.();
  }
  return differences;
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
 * file another connection can attach (`:memory:`).
 */
export function linesDifferences(rebuilt: Iterable<Line>, stored: Iterable<Line>): RowDifference[] {
  const differences: RowDifference[] = [];
  const [a, b] = [rebuilt[Symbol.iterator](), stored[Symbol.iterator]()];
  const tables = COMPARED.map(([table]) => table);
  const order = (p: Line, q: Line) =>
    tables.indexOf(p.table) - tables.indexOf(q.table) || compareLineKeys(p.key, q.key);
  try {
    let [x, y] = [a.next().value as Line | undefined, b.next().value as Line | undefined];
    while (x || y) {
      const step = !y ? -1 : !x ? 1 : order(x, y);
      const line = (step <= 0 ? x : y)!;
      if (step !== 0 || x!.value !== y!.value) {
        differences.push({
          table: line.table,
          key: line.key,
          ...(step <= 0 ? { rebuilt: x!.value } : {}),
          ...(step >= 0 ? { stored: y!.value } : {}),
        });
      }
      if (step <= 0) x = a.next().value as Line | undefined;
      if (step >= 0) y = b.next().value as Line | undefined;
    }
  } finally {
    // A read that failed half-way leaves the other file's query open, which would keep it from closing.
    a.return?.();
    b.return?.();
  }
  return differences;
}
