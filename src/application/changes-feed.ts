import { type ChangeItem, changeItem } from '../../projections/changes.js';
import { ADMIN_COLLECTIONS } from '../domain/resources.js';
import { DomainError } from '../domain/shared/errors.js';
import type { ChangeQuery } from '../read-models/port.js';
import type { Changes } from './changes.js';
import type { Projected } from './projector.js';

/** The filters a live client may give: a subset of the change log's (token events for admins only). */
export type FeedFilter = Pick<ChangeQuery, 'resource' | 'id' | 'actor' | 'type' | 'admin'>;

/** Where a client's changes go. */
export interface FeedClient {
  /**
   * Sends changes, in one write: a folded batch goes to a client as one piece, so that what a slow
   * client leaves unread is a few large pieces, not one per change (bench/abuse.ts, stalled
   * subscribers).
   */
  write(items: ChangeItem[]): void;
  /** Bytes written and not yet taken by the client (its socket's buffer). */
  readonly buffered: number;
  /** Resolves when the client has taken what was written, or is gone. */
  drained(): Promise<void>;
  readonly gone: boolean;
  /** The client is cut off at once, its buffer freed; it reconnects with its last id and misses nothing. */
  drop(): void;
}

export interface FeedLimits {
  /** Clients at once; one more is refused (503) until one leaves. */
  maxSubscribers: number;
  /** Bytes a live client may leave unread before it is cut off (the log is the buffer, not memory). */
  maxBufferedBytes: number;
}

/** A catch-up waits for the client past this many unread bytes (backpressure), then reads on. */
const CATCH_UP_HIGH_WATER = 256 * 1024;

export function matches(filter: FeedFilter, item: ChangeItem): boolean {
  if (!filter.admin && item.resource !== null && ADMIN_COLLECTIONS.includes(item.resource)) return false;
  if (filter.actor !== undefined && item.actor !== filter.actor) return false;
  if (filter.type !== undefined && item.type !== filter.type) return false;
  if (filter.resource === undefined) return true;
  const entries = [{ resource: item.resource, id: item.id }, ...item.effects];
  return entries.some((e) => e.resource === filter.resource && (filter.id === undefined || e.id === filter.id));
}

class Subscriber {
  /** The last position looked at for the client: nothing at or before it is sent again. */
  last: number;
  /** While it catches up: the changes folded meanwhile, sent once the catch-up reaches them. */
  waiting: ChangeItem[] = [];
  waitingBytes = 0;

  constructor(
    readonly filter: FeedFilter,
    after: number,
    readonly client: FeedClient,
  ) {
    this.last = after;
  }

  /** Sends those of the items that are new and match. */
  offer(items: ChangeItem[]): void {
    const fresh: ChangeItem[] = [];
    for (const item of items) {
      if (item.position <= this.last) continue;
      this.last = item.position;
      if (matches(this.filter, item)) fresh.push(item);
    }
    if (fresh.length > 0) this.client.write(fresh);
  }

  /** Keeps a change folded while catching up; false past the bound (it is cut off). */
  hold(item: ChangeItem, maxBytes: number): boolean {
    if (!matches(this.filter, item)) return true;
    this.waiting.push(item);
    this.waitingBytes += JSON.stringify(item).length;
    return this.waitingBytes <= maxBytes;
  }

  /** The changes held while catching up, those the catch-up did not already send. */
  release(): void {
    this.offer(this.waiting);
    this.waiting = [];
  }
}

export class ChangesFeed {
  private readonly live = new Set<Subscriber>();
  private readonly joining = new Set<Subscriber>();
  private readonly followers = new Set<(items: ChangeItem[]) => void>();

  constructor(
    private readonly changes: Changes,
    private readonly limits: FeedLimits = { maxSubscribers: 128, maxBufferedBytes: 1024 * 1024 },
  ) {}

  /** For the projector: turns each folded event into its change item and hands it out. */
  readonly publish = (batch: Projected[]): void => {
    if (this.live.size === 0 && this.joining.size === 0 && this.followers.size === 0) return;
    const items = batch.flatMap(({ change, versions }) => (change ? [changeItem(change, versions)] : []));
    for (const follower of this.followers) follower(items);
    for (const subscriber of this.live) {
      subscriber.offer(items);
      if (subscriber.client.buffered > this.limits.maxBufferedBytes) this.cutOff(subscriber);
    }
    for (const subscriber of this.joining) {
      if (!items.every((item) => subscriber.hold(item, this.limits.maxBufferedBytes))) this.cutOff(subscriber);
    }
  };

  /**
   * Hands every change folded from now on to `follower`, in position order, as the live feed sends
   * them (a wing's live tail: event rules); returns how to stop.
   */
  follow(follower: (items: ChangeItem[]) => void): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /** Refuses a client past the limit (503): checked before the answer starts. */
  admit(): void {
    if (this.live.size + this.joining.size < this.limits.maxSubscribers) return;
    throw new DomainError(503, 'unavailable', `the live feed takes ${this.limits.maxSubscribers} clients at most`, {
      retryAfter: '5',
    });
  }

  /**
   * Starts a client after `after`: the change log read a page per turn of the event loop, waiting for
   * the client when it has much unread; meanwhile the changes folded are held for it. When the log
   * is read to its end, the held changes it did not already send follow, and the client is live, in
   * one step: none missed, none twice, in position order. Resolves with how to stop it.
   */
  async subscribe(filter: FeedFilter, after: number, client: FeedClient): Promise<() => void> {
    this.admit();
    const subscriber = new Subscriber(filter, after, client);
    this.joining.add(subscriber);
    try {
      for await (const item of this.changes.changes({ ...filter, after, order: 'asc' })) {
        if (client.gone || !this.joining.has(subscriber)) return () => {};
        subscriber.offer([item]);
        if (client.buffered > CATCH_UP_HIGH_WATER) await client.drained();
      }
      if (client.gone || !this.joining.has(subscriber)) return () => {};
      subscriber.release();
      this.live.add(subscriber);
    } finally {
      this.joining.delete(subscriber);
    }
    return () => this.live.delete(subscriber);
  }

  private cutOff(subscriber: Subscriber): void {
    this.live.delete(subscriber);
    this.joining.delete(subscriber);
    subscriber.client.drop();
  }

  /** Ends every client (on shutdown). */
  closeAll(): void {
    for (const subscriber of [...this.live, ...this.joining]) subscriber.client.drop();
    this.live.clear();
    this.joining.clear();
  }

  get clients(): number {
    return this.live.size;
  }
}
