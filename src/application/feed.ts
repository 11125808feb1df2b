import { type ChangeItem, changeItem } from '../../projections/changes.js';
import type { ChangeQuery } from '../read-models/port.js';
import type { Audit } from './audit.js';
import type { Projected } from './projector.js';

/** The filters a live client may give: a subset of the change log's (token events for admins only). */
export type FeedFilter = Pick<ChangeQuery, 'resource' | 'id' | 'actor' | 'type' | 'tokens'>;

/** Where a client's changes go. */
export interface FeedClient {
  /** Sends one change; false when the client's buffer is full (it was still queued). */
  write(item: ChangeItem): boolean;
  /** Resolves when the client has taken what was written, or is gone. */
  drained(): Promise<void>;
  readonly gone: boolean;
  /** The client fell too far behind: it is closed, and reconnects with its last id. */
  drop(): void;
}

/** How many changes may wait for a slow live client before it is dropped (it reconnects and misses nothing). */
const MAX_WAITING = 10_000;

export function matches(filter: FeedFilter, item: ChangeItem): boolean {
  if (!filter.tokens && item.resource === 'tokens') return false;
  if (filter.actor !== undefined && item.actor !== filter.actor) return false;
  if (filter.type !== undefined && item.type !== filter.type) return false;
  if (filter.resource === undefined) return true;
  const entries = [{ resource: item.resource, id: item.id }, ...item.effects];
  return entries.some((e) => e.resource === filter.resource && (filter.id === undefined || e.id === filter.id));
}

class Subscriber {
  /** The last position looked at for the client: nothing at or before it is sent again. */
  last: number;
  private waiting = 0;

  constructor(
    readonly filter: FeedFilter,
    after: number,
    readonly client: FeedClient,
  ) {
    this.last = after;
  }

  /** Sends the item if it is new and matches; 'full' when the client's buffer is full. */
  offer(item: ChangeItem): 'sent' | 'skipped' | 'full' {
    if (item.position <= this.last) return 'skipped';
    this.last = item.position;
    if (!matches(this.filter, item)) return 'skipped';
    return this.client.write(item) ? 'sent' : 'full';
  }

  /** Live: a client that stays full for MAX_WAITING changes is dropped. False once dropped. */
  offerLive(item: ChangeItem): boolean {
    const outcome = this.offer(item);
    if (outcome === 'sent') this.waiting = 0;
    if (outcome !== 'full' || ++this.waiting <= MAX_WAITING) return true;
    this.client.drop();
    return false;
  }
}

/**
 * The live change feed: every change this instance folds (its own writes and, as it follows the log,
 * every other instance's), in position order, none twice. A new client first gets what the change log
 * holds after its last id, at its own pace, then the live changes.
 */
export class Feed {
  private readonly live = new Set<Subscriber>();

  constructor(private readonly audit: Audit) {}

  /** For the projector: turns each folded event into its change item and hands it out. */
  readonly publish = (batch: Projected[]): void => {
    if (this.live.size === 0) return;
    const items = batch.flatMap(({ change, versions }) => (change ? [changeItem(change, versions)] : []));
    for (const subscriber of this.live) {
      for (const item of items) {
        if (subscriber.offerLive(item)) continue;
        this.live.delete(subscriber);
        break;
      }
    }
  };

  /**
   * Starts a client after `after`. The last read of the change log and the switch to live happen in
   * one turn of the event loop: no change is folded in between, so none is missed or sent twice.
   * Resolves with how to stop it.
   */
  async subscribe(filter: FeedFilter, after: number, client: FeedClient): Promise<() => void> {
    const subscriber = new Subscriber(filter, after, client);
    while (!this.catchUp(subscriber)) {
      await client.drained();
      if (client.gone) return () => {};
    }
    return () => this.live.delete(subscriber);
  }

  /**
   * Sends what the change log holds after the client's last position and, when it got to the end
   * without filling the client's buffer, makes the client live in the same synchronous run.
   */
  private catchUp(subscriber: Subscriber): boolean {
    const query: ChangeQuery = { ...subscriber.filter, after: subscriber.last, order: 'asc' };
    for (const item of this.audit.changes(query)) if (subscriber.offer(item) === 'full') return false;
    this.live.add(subscriber);
    return true;
  }

  /** Ends every client (on shutdown). */
  closeAll(): void {
    for (const subscriber of this.live) subscriber.client.drop();
    this.live.clear();
  }

  get clients(): number {
    return this.live.size;
  }
}
