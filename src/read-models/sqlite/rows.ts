import type Database from 'better-sqlite3';

/** Rows per INSERT: one call into SQLite writes this many (each call has a fixed cost of its own). */
const CHUNK = 64;

/**
 * Inserts many rows of one table with multi-row INSERTs. `head` is the statement up to VALUES; each
 * row is `width` positional values. The statement for a full chunk is prepared once, those for the
 * shorter last chunk on first use.
 */
export class RowWriter {
  private readonly statements = new Map<number, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly head: string,
    private readonly width: number,
  ) {}

  /** Writes `values`: rows one after another, `width` values each. */
  write(values: unknown[]): void {
    const step = CHUNK * this.width;
    let start = 0;
    for (; start + step <= values.length; start += step) this.statement(CHUNK).run(values.slice(start, start + step));
    if (start < values.length) this.statement((values.length - start) / this.width).run(values.slice(start));
  }

  private statement(rows: number): Database.Statement {
    let statement = this.statements.get(rows);
    if (!statement) {
      const row = `(${Array(this.width).fill('?').join(', ')})`;
      statement = this.db.prepare(`${this.head} VALUES ${Array(rows).fill(row).join(', ')}`);
      this.statements.set(rows, statement);
    }
    return statement;
  }
}
