import type Database from 'better-sqlite3';
import { ListCopies } from './list-copies.js';
import { RowWriter } from './rows.js';
import { CONSISTENT_AT, type ListSince, listDue, type SaveJob } from './save-jobs.js';

/** A save that failed is tried again this long after (or sooner, with the next save handed over). */
const RETRY_MS = 1000;

function statements(db: Database.Database) {
  return {
    meta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE name = ?'),
    setMeta: db.prepare('INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)'),
    upsert: db.prepare('INSERT OR REPLACE INTO entries (resource, id, doc) VALUES (?, ?, ?)'),
    remove: db.prepare('DELETE FROM entries WHERE resource = ? AND id = ?'),
    bury: db.prepare('INSERT OR REPLACE INTO tombstones (resource, id, version, created_at) VALUES (?, ?, ?, ?)'),
    unbury: db.prepare('DELETE FROM tombstones WHERE resource = ? AND id = ?'),
    counter: db.prepare(
      `INSERT INTO counters (resource, last_id) VALUES (?, ?)
       ON CONFLICT (resource) DO UPDATE SET last_id = MAX(last_id, excluded.last_id)`,
    ),
    changes: new RowWriter(
      db,
      'INSERT OR IGNORE INTO changes (position, type, at, hw_at, actor, request_id, resource, entry_id, data)',
      9,
    ),
    versions: new RowWriter(
      db,
      'INSERT OR IGNORE INTO versions (resource, entry_id, revision, position, diff, deleted, snapshot)',
      7,
    ),
    request: db.prepare(
      `INSERT OR REPLACE INTO requests (actor, key, fingerprint, response, at, position)
       VALUES (@actor, @key, @fingerprint, @response, @at, @position)`,
    ),
    listSnapshot: db.prepare(
      'INSERT OR IGNORE INTO list_snapshots (resource, position, id, doc) SELECT resource, ?, id, doc FROM entries WHERE resource = ?',
    ),
    listSnapshotDone: db.prepare('INSERT OR IGNORE INTO list_snapshots_done (resource, position) VALUES (?, ?)'),
    node: db.prepare('INSERT OR IGNORE INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)'),
  };
}

/**
 * Writes save jobs into a read-model file, each in one transaction, on the connection it is given.
 * With `copyListsOf` (a file in use), list snapshots are copied a chunk at a time after the save
 * that makes them due (ListCopies); without it (a file filled in bulk, or in memory), at once.
 * With `bulk` (a rebuild's file), a transaction runs from one consistent job to the next instead.
 */
export class Saver {
  private readonly sql: ReturnType<typeof statements>;
  private readonly listCopies?: ListCopies;
  /** Lists whose snapshot became due in the save under way, copied once it is committed. */
  private dueLists: [string, number][] = [];
  /** A rebuild's save that failed: its transaction is rolled back, and nothing more is written. */
  private failure?: Error;

  constructor(
    private readonly db: Database.Database,
    copyListsOf?: string,
    private readonly bulk = false,
  ) {
    this.sql = statements(db);
    if (copyListsOf) {
      this.listCopies = new ListCopies(copyListsOf, db, (resource, position, size) =>
        this.listTaken(resource, position, size),
      );
    }
  }

  /**
   * Writes the jobs, in order, in one transaction; or in more, when a job makes a list snapshot due
   * in a file in use: the transaction ends with that job, so that the copy, which starts after the
   * commit, sees the entries as they were at its position.
   */
  save(jobs: SaveJob[]): void {
    if (this.bulk) {
      this.saveInBulk(jobs);
      return;
    }
    let next = 0;
    while (next < jobs.length) {
      this.dueLists = [];
      this.db
        .transaction(() => {
          while (next < jobs.length && this.dueLists.length === 0) this.saveOne(jobs[next++]);
        })
        .immediate();
      for (const [resource, position] of this.dueLists) this.listCopies!.start(resource, position);
    }
  }

  /**
   * A rebuild's jobs: a transaction is opened by the first job after a consistent one and committed
   * by the next consistent one (SaveJob.consistent), so that the file is only ever at such a point. A
   * failure rolls back to the last one and ends the saves: the jobs rolled back are gone from the
   * queue, and a job written after them would not follow on from what the file holds.
   */
  private saveInBulk(jobs: SaveJob[]): void {
    if (this.failure) throw this.failure;
    try {
      for (const job of jobs) {
        if (!this.db.inTransaction) this.db.exec('BEGIN IMMEDIATE');
        this.saveOne(job);
        if (!job.consistent) continue;
        this.sql.setMeta.run(CONSISTENT_AT, String(job.revision));
        this.db.exec('COMMIT');
      }
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.failure = error as Error;
      throw error;
    }
  }

  private saveOne(job: SaveJob): void {
    // Another instance sharing this store got there first, with the same fold.
    if (Number(this.meta('checkpoint') ?? -1) >= job.revision) return;
    this.saveEntries(job);
    this.sql.changes.write(job.changes);
    this.sql.versions.write(job.versions);
    for (const row of job.requests) this.sql.request.run(row);
    const { nodes, hashes } = job;
    const bytes = Buffer.from(hashes.buffer, hashes.byteOffset, hashes.byteLength);
    for (let i = 0; i < nodes.length; i += 2)
      this.sql.node.run(nodes[i], nodes[i + 1], bytes.subarray(i * 16, i * 16 + 32));
    this.snapshotLists(job);
    if (job.secretKey) this.sql.setMeta.run('secret_key', job.secretKey);
    if (job.logKey) this.sql.setMeta.run('log_key', job.logKey);
    this.sql.setMeta.run('checkpoint', String(job.revision));
    this.sql.setMeta.run('checkpoint_digest', job.digest);
    this.sql.setMeta.run('high_water_at', job.highWaterAt);
    this.sql.setMeta.run('log_edge', job.edge);
  }

  /** Abandons the list copies under way, and a rebuild's jobs since its last consistent one. */
  close(): void {
    this.listCopies?.close();
    if (this.bulk && this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  private meta(name: string): string | undefined {
    return this.sql.meta.get(name)?.value;
  }

  private saveEntries(job: SaveJob): void {
    const { entries } = job;
    for (let i = 0; i < entries.length; i += 5) {
      const [resource, id, doc, version, createdAt] = entries.slice(i, i + 5);
      if (doc !== null) {
        this.sql.upsert.run(resource, id, doc);
        this.sql.unbury.run(resource, id);
      } else {
        this.sql.remove.run(resource, id);
        if (version !== null) this.sql.bury.run(resource, id, version, createdAt);
      }
    }
    for (const [resource, lastId] of job.lastIds) this.sql.counter.run(resource, lastId);
  }

  /**
   * Copies a resource's whole list once enough of its versions came since the last copy (or when the
   * job says it is due): a chunk at a time after this save (ListCopies), or at once in a file filled
   * in bulk or in memory.
   */
  private snapshotLists({ versionCounts, revision, listsDue }: SaveJob): void {
    const position = revision + 1;
    for (const [resource, count] of versionCounts) {
      const since = this.listSince(resource);
      const due = listsDue ? listsDue.includes(resource) : listDue(since, count);
      if (!due || this.listCopies?.busy(resource)) {
        this.setListSince(resource, { rows: since.rows + count, size: since.size });
        continue;
      }
      this.setListSince(resource, { rows: 0, size: since.size });
      if (this.listCopies) this.dueLists.push([resource, position]);
      else this.listTaken(resource, position, this.sql.listSnapshot.run(position, resource).changes);
    }
  }

  /** Version rows of `resource` since its last list snapshot was taken, and the size of that list. */
  private listSince(resource: string): ListSince {
    return JSON.parse(this.meta(`list:${resource}`) ?? '{"rows":0,"size":0}');
  }

  private setListSince(resource: string, since: ListSince): void {
    this.sql.setMeta.run(`list:${resource}`, JSON.stringify(since));
  }

  /**
   * A list snapshot whole at `position` (copied at once, or by the last chunk's transaction): it
   * counts from now on, and its size sets when the next one is due.
   */
  private listTaken(resource: string, position: number, size: number): void {
    this.sql.listSnapshotDone.run(resource, position);
    this.setListSince(resource, { rows: this.listSince(resource).rows, size });
  }
}

/**
 * Save jobs written in the order they came. With `holdMs`, a job waits that long for the ones after
 * it, and all of them are written in one transaction (`hurry` writes them at once): at 100,000
 * servers each save rewrote, for every PATCH, a page of the entries and a page of the index of
 * versions by entry, at random places; one transaction per half second writes each of those pages
 * once for all the changes that fell on it. A job that fails stays first: `failed` hears of it, and
 * it is tried again RETRY_MS later, or as soon as another job comes. `saved(n)` hears of every n
 * jobs written.
 */
export class SaveQueue {
  private readonly jobs: SaveJob[] = [];
  private timer?: NodeJS.Timeout;
  private failing = false;

  constructor(
    private readonly saver: Saver,
    private readonly failed: (error: Error) => void,
    private readonly saved: (count: number) => void = () => {},
    private readonly holdMs = 0,
  ) {}

  save(job: SaveJob): void {
    this.jobs.push(job);
    if (this.failing || this.holdMs === 0) this.drain();
    else this.timer ??= setTimeout(() => this.drain(), this.holdMs);
  }

  /** Writes the jobs held, now (while saves fail, they are tried again at their own pace). */
  hurry(): void {
    if (!this.failing && this.jobs.length > 0) this.drain();
  }

  private drain(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.jobs.length === 0) return;
    try {
      this.saver.save(this.jobs);
    } catch (error) {
      this.failing = true;
      this.failed(error as Error);
      this.timer = setTimeout(() => this.drain(), RETRY_MS).unref();
      return;
    }
    this.failing = false;
    const count = this.jobs.length;
    this.jobs.length = 0;
    this.saved(count);
  }

  /** Writes the jobs held (a save that keeps failing is given up: the log still has its events). */
  close(): void {
    if (!this.failing) this.drain();
    clearTimeout(this.timer);
    this.saver.close();
  }
}
