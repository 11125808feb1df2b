import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ChangeItem, changeItem } from '../../projections/changes.js';
import { DomainError } from '../domain/shared/errors.js';
import type { ChangeQuery } from '../read-models/port.js';
import type { Audit } from './audit.js';
import type { Projected } from './projector.js';

/** The filters a live client may give: a subset of the change log's (token events for admins only). */
export type FeedFilter = Pick<ChangeQuery, 'resource' | 'id' | 'actor' | 'type' | 'tokens'>;

/** Where a client's changes go. */
export interface FeedClient {
  /** Sends one change. */
  write(item: ChangeItem): void;
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

/** Changes read from the change log per page of a catch-up; each page is one short turn of the event loop. */
const PAGE = 200;
/** A catch-up waits for the client past this many unread bytes (backpressure), then reads on. */
const CATCH_UP_HIGH_WATER = 256 * 1024;

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

  constructor(
    readonly filter: FeedFilter,
    after: number,
    readonly client: FeedClient,
  ) {
    this.last = after;
  }

  /** Sends the item if it is new and matches. */
  offer(item: ChangeItem): void {
    if (item.position <= this.last) return;
    this.last = item.position;
    if (matches(this.filter, item)) this.client.write(item);
  }
}

/**
 * The live change feed: every change this instance folds (its own writes and, as it follows the log,
 * every other instance's), in position order, none twice. A new client first gets what the change log
 * holds after its last id, a page at a time, at its own pace, then the live changes. A live client
 * that leaves more than `maxBufferedBytes` unread is cut off: memory never holds more for it, and it
 * resumes with Last-Event-ID.
 */
export class Feed {
  private readonly live = new Set<Subscriber>();
  private catchingUp = 0;

  constructor(
    private readonly audit: Audit,
    private readonly limits: FeedLimits = { maxSubscribers: 128, maxBufferedBytes: 1024 * 1024 },
  ) {}

  /** For the projector: turns each folded event into its change item and hands it out. */
  readonly publish = (batch: Projected[]): void => {
    if (this.live.size === 0) return;
    const items = batch.flatMap(({ change, versions }) => (change ? [changeItem(change, versions)] : []));
    for (const subscriber of this.live) {
      for (const item of items) subscriber.offer(item);
      if (subscriber.client.buffered > this.limits.maxBufferedBytes) this.cutOff(subscriber);
    }
  };

  /** Refuses a client past the limit (503): checked before the answer starts. */
  admit(): void {
    if (this.clients + this.catchingUp < this.limits.maxSubscribers) return;
    throw new DomainError(503, 'unavailable', `the live feed takes ${this.limits.maxSubscribers} clients at most`, {
      retryAfter: '5',
    });
  }

  /**
   * Starts a client after `after`: the change log a page at a time, each page in a turn of its own,
   * waiting for the client when it has much unread; then live. The last page and the switch to live
   * happen in one turn of the event loop: no change is folded in between, so none is missed or sent
   * twice. Resolves with how to stop it.
   */
  async subscribe(filter: FeedFilter, after: number, client: FeedClient): Promise<() => void> {
    this.admit();
    const subscriber = new Subscriber(filter, after, client);
    this.catchingUp++;
    try {
      while (!this.nextPage(subscriber)) {
        if (client.buffered > CATCH_UP_HIGH_WATER) await client.drained();
        else await nextTurn();
        if (client.gone) return () => {};
      }
    } finally {
      this.catchingUp--;
    }
    return () => this.live.delete(subscriber);
  }

  /** One page of the change log after the client's last position; at its end, the client goes live. */
  private nextPage(subscriber: Subscriber): boolean {
    const query: ChangeQuery = { ...subscriber.filter, after: subscriber.last, order: 'asc' };
    let read = 0;
    for (const item of this.audit.changes(query)) {
      subscriber.offer(item);
      if (++read === PAGE) return false;
    }
    this.live.add(subscriber);
    return true;
  }

  private cutOff(subscriber: Subscriber): void {
    this.live.delete(subscriber);
    subscriber.client.drop();
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
