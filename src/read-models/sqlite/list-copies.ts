import type BetterSqlite3 from 'better-sqlite3';
import Database from '../../sqlite/driver.js';
import { RowWriter } from './rows.js';

/** Entries copied per step: a step takes about a millisecond, whatever the size of the list. */
const CHUNK = 500;

interface Copy {
  resource: string;
  position: number;
  /** A read-only connection whose read transaction sees the file as it was at `position`. */
  reader: BetterSqlite3.Database;
  rows: IterableIterator<[number, string]>;
  /** The next row, read ahead (the first read is what fixes the reader's view). */
  next: IteratorResult<[number, string]>;
  copied: number;
}

/**
 * Whole-list snapshots of a resource, copied from the entries table a chunk at a time, so that no
 * copy holds the event loop (bench/http.ts, largest event-loop delay at 100,000 servers): a
 * read-only connection opens a read transaction right after the save that makes the snapshot due
 * (in WAL mode it keeps seeing the file as it was then, whatever is written after), and each step,
 * a few milliseconds apart, copies the next CHUNK entries in a write transaction of its own. The
 * snapshot counts only once its last entry is in: `done(resource, position, size)` marks it so, inside
 * that last step's transaction.
 */
export class ListCopies {
  private readonly copies = new Map<string, Copy>();
  private readonly insert: RowWriter;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly location: string,
    private readonly db: BetterSqlite3.Database,
    private readonly done: (resource: string, position: number, size: number) => void,
  ) {
    this.insert = new RowWriter(db, 'INSERT OR IGNORE INTO list_snapshots (resource, position, id, doc)', 4);
  }

  /** Whether a copy of `resource`'s list is under way. */
  busy(resource: string): boolean {
    return this.copies.has(resource);
  }

  /** Starts copying `resource`'s list as the file holds it now (call it after the commit), at `position`. */
  start(resource: string, position: number): void {
    const reader = new Database(this.location, { readonly: true });
    reader.exec('BEGIN');
    const rows = reader
      .prepare<[string], [number, string]>('SELECT id, doc FROM entries WHERE resource = ? ORDER BY id')
      .raw()
      .iterate(resource);
    this.copies.set(resource, { resource, position, reader, rows, next: rows.next(), copied: 0 });
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.step();
    }, 1).unref();
  }

  /**
   * The next chunk of every copy under way, in one write transaction; finished copies count from
   * then on. A step that fails abandons the copies (a snapshot only saves time: the next one due is
   * taken as usual) and says so in a process warning.
   */
  private step(): void {
    try {
      this.copyChunks();
    } catch (error) {
      this.close();
      process.emitWarning(`list snapshots of ${this.location} abandoned: ${(error as Error).message}`, {
        code: 'PMACONTROL_LIST_SNAPSHOT',
      });
      return;
    }
    if (this.copies.size > 0) this.schedule();
  }

  private copyChunks(): void {
    const finished: Copy[] = [];
    this.db
      .transaction(() => {
        for (const copy of this.copies.values()) {
          const values: unknown[] = [];
          for (let n = 0; n < CHUNK && !copy.next.done; n++) {
            const [id, doc] = copy.next.value;
            values.push(copy.resource, copy.position, id, doc);
            copy.next = copy.rows.next();
          }
          this.insert.write(values);
          copy.copied += values.length / 4;
          if (!copy.next.done) continue;
          this.done(copy.resource, copy.position, copy.copied);
          finished.push(copy);
        }
      })
      .immediate();
    for (const copy of finished) this.drop(copy);
  }

  private drop(copy: Copy): void {
    this.copies.delete(copy.resource);
    copy.rows.return?.();
    copy.reader.close();
  }

  /** Abandons the copies under way (their rows stay, never counted as a snapshot). */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const copy of [...this.copies.values()]) this.drop(copy);
  }
}
