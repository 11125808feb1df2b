import type { VersionRow } from '../../../projections/changes.js';
import type { EntryState, ProjectionBatch } from '../port.js';
import { encode, encodeEntries, type ListSince, listDue, type SaveJob } from './save-jobs.js';

/** Where a resource's list snapshots stand, and how many of its entries the file holds (for the size). */
export interface ListCount extends ListSince {
  present: number;
}

/**
 * At most this many events between two consistent points of a rebuild's file (SaveJob.consistent):
 * what a rebuild killed loses, about 5 s of work at its pace on 10,000,000 events (bench/history.ts).
 * Each point writes every entry held, so they are not made more often: at 50,000 a log of 20,000
 * servers rebuilt 4–6% slower (bench/replay.ts); list snapshots, which make points too, fall about
 * every 140,000 events on a fleet of 10,000 servers.
 */
export const CONSISTENT_EVERY = 200_000;

/** Where a rebuild's file stands when it is opened: nothing (new) or its last consistent point. */
export interface BulkStart {
  revision: number;
  lists: Map<string, ListCount>;
}

/**
 * The batches of a rebuild, as they are handed to the saving thread. A rebuild changes most entries
 * in every save, and only the last row of each stays, so a changed entry's state is held until its
 * row is needed (bench/replay.ts). That is when a list snapshot, which is copied from the entries in the file, is
 * due (the batch that makes it due carries every entry held), and at the end (`flush`). An entry
 * that appears (created, or back after a hard delete) is written with its batch, as before: holding
 * the entries of a log of creations saved no row and cost a quarter of the speed (every held entry
 * survives into V8's old generation, and the saving thread got them all at once, at the end).
 *
 * When a snapshot is due is decided here, by the rule the saving thread uses in a file in use
 * (`listDue`), from the version rows, counted from where the file stands (`start`: empty, or a
 * rebuild's file resumed).
 *
 * A job that carries every entry held is a consistent point: the file then holds the read models as
 * they are at its revision. There is one at least every CONSISTENT_EVERY events; the saver commits
 * there and nowhere else, so a rebuild killed leaves its file at the last one.
 */
export class BulkBatches {
  private readonly held = new Map<string, EntryState>();
  /**
   * The last batch's job, sent once the next one comes or at `flush` (then with the entries held).
   * It is made at once: the batch's rows, kept a batch longer, would outlive V8's young generation.
   */
  private last?: SaveJob;
  private readonly lists: Map<string, ListCount>;
  /** The revision of the last consistent point. */
  private consistentAt: number;

  constructor(
    private readonly send: (job: SaveJob) => void,
    start: BulkStart = { revision: -1, lists: new Map() },
  ) {
    this.lists = start.lists;
    this.consistentAt = start.revision;
  }

  add(batch: ProjectionBatch): void {
    this.sendLast(false);
    const appearing = new Set<string>();
    for (const row of batch.versions) if (row.appears) appearing.add(`${row.resource}/${row.entry_id}`);
    const entries: EntryState[] = [];
    for (const state of batch.entries) {
      const key = `${state.resource}/${state.id}`;
      if (appearing.has(key)) {
        entries.push(state);
        this.held.delete(key);
      } else this.held.set(key, state);
    }
    const listsDue = this.dueLists(batch.versions);
    this.last = { ...encode({ ...batch, entries }), listsDue };
    if (listsDue.length > 0 || batch.revision - this.consistentAt >= CONSISTENT_EVERY) this.sendLast(true);
  }

  /** Sends what is kept: the last batch, with every entry held. */
  flush(): void {
    this.sendLast(true);
  }

  private sendLast(withHeld: boolean): void {
    const job = this.last;
    if (!job) return;
    this.last = undefined;
    if (withHeld) {
      encodeEntries(this.held.values(), job.entries);
      this.held.clear();
      job.consistent = true;
      this.consistentAt = job.revision;
    }
    this.send(job);
  }

  /** The resources whose list snapshot the batch's version rows make due. */
  private dueLists(versions: VersionRow[]): string[] {
    const counts = new Map<string, number>();
    for (const { resource, appears, deleted } of versions) {
      counts.set(resource, (counts.get(resource) ?? 0) + 1);
      const list = this.listCount(resource);
      if (appears) list.present++;
      else if (deleted) list.present--;
    }
    const due: string[] = [];
    for (const [resource, count] of counts) {
      const list = this.listCount(resource);
      if (listDue(list, count)) {
        due.push(resource);
        Object.assign(list, { rows: 0, size: list.present });
      } else list.rows += count;
    }
    return due;
  }

  private listCount(resource: string): ListCount {
    let list = this.lists.get(resource);
    if (!list) {
      list = { rows: 0, size: 0, present: 0 };
      this.lists.set(resource, list);
    }
    return list;
  }
}
