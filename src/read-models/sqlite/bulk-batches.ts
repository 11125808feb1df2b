import type { VersionRow } from '../../../projections/changes.js';
import type { EntryState, ProjectionBatch } from '../port.js';
import { encode, type ListSince, listDue, type SaveJob } from './saving.js';

/** Where a resource's list snapshots stand, and how many of its entries the file holds (for the size). */
interface ListCount extends ListSince {
  present: number;
}

/**
 * The batches of a rebuild, as they are handed to the saving thread. A rebuild of 100,000 servers
 * and 900,000 PATCHes changed most entries in every batch, so each save made their JSON and wrote
 * their rows again, though only the last of them stays: here an entry's state is held until its row
 * is needed. That is when a list snapshot, which is copied from the entries in the file, is due (the
 * batch that makes it due carries every entry held), and at the end (`flush`). When a snapshot is
 * due is decided here, by the rule the saving thread uses in a file in use (`listDue`), from the
 * version rows: a file filled in bulk starts empty, so the counts start at zero on both sides.
 */
export class BulkBatches {
  private readonly held = new Map<string, EntryState>();
  /** The last batch, sent once the next one comes or at `flush`: with the entries, if it is the last. */
  private last?: { batch: ProjectionBatch; listsDue: string[] };
  private readonly lists = new Map<string, ListCount>();

  constructor(private readonly send: (job: SaveJob) => void) {}

  add(batch: ProjectionBatch): void {
    this.sendLast(false);
    for (const state of batch.entries) this.held.set(`${state.resource}/${state.id}`, state);
    this.last = { batch, listsDue: this.dueLists(batch.versions) };
    if (this.last.listsDue.length > 0) this.sendLast(true);
  }

  /** Sends what is kept: the last batch, with every entry held. */
  flush(): void {
    this.sendLast(true);
  }

  private sendLast(withEntries: boolean): void {
    if (!this.last) return;
    const { batch, listsDue } = this.last;
    this.last = undefined;
    const entries = withEntries ? [...this.held.values()] : [];
    if (withEntries) this.held.clear();
    this.send({ ...encode({ ...batch, entries }), listsDue });
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
