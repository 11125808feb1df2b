import type { ChangeItem } from '../application/service.js';
import type { EntryRecord } from '../engine/table.js';

/** Changes kept in memory for the rules' workers (bench/webhooks.ts: the live tail, not the change log). */
const KEPT = 20_000;

/**
 * The changes this instance folded since the deliverer started, the latest KEPT of them, in position
 * order, as the live feed hands them out: a worker that follows the log closely reads its next page
 * here, without asking the read models (which would wait for their save, and cost the writes a
 * flush each time); one further behind reads the change log.
 */
export class Tail {
  private items: ChangeItem[] = [];
  /** The entry each change left, where it was known when the change was folded (by position). */
  private entries = new Map<number, EntryRecord>();
  /** Every change after this position is in `items`. */
  private from: number;

  constructor(head: number) {
    this.from = head;
  }

  /** `entryOf`: the entry as the change left it, when the state still holds that version. */
  add(batch: ChangeItem[], entryOf: (item: ChangeItem) => EntryRecord | undefined): void {
    for (const item of batch) {
      this.items.push(item);
      const entry = entryOf(item);
      if (entry) this.entries.set(item.position, entry);
    }
    if (this.items.length > KEPT * 2) {
      const dropped = this.items.length - KEPT;
      this.from = this.items[dropped - 1].position;
      for (const item of this.items.slice(0, dropped)) this.entries.delete(item.position);
      this.items = this.items.slice(dropped);
    }
  }

  /** The entry the change at `position` left, if it was known when it was folded. */
  entryAt(position: number): EntryRecord | undefined {
    return this.entries.get(position);
  }

  /** Up to `max` changes after `cursor`, or undefined when the tail does not hold all of them. */
  after(cursor: number, max: number): ChangeItem[] | undefined {
    if (cursor < this.from) return undefined;
    let low = 0;
    let high = this.items.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.items[middle].position <= cursor) low = middle + 1;
      else high = middle;
    }
    return this.items.slice(low, low + max);
  }
}
