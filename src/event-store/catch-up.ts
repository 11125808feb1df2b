import type { OnEvent, RecordedEvent, Subscription } from './port.js';

/** How often to look for other processes' appends: `minMs` while they come, backing off to `maxMs` when idle. */
export interface Poll {
  minMs: number;
  maxMs: number;
}

/**
 * A catch-up subscription for stores that can be asked "what came after revision r?": it reads in
 * batches until nothing is left, then waits to be woken (by an append in this process, or a timer
 * for appends by other processes).
 */
export class CatchUpSubscription implements Subscription {
  private next: number;
  private running = false;
  private again = false;
  private closed = false;
  private timer?: NodeJS.Timeout;
  /** The current pause between two looks for other processes' appends. */
  private delay: number;

  constructor(
    readonly stream: string,
    private readonly read: (fromRevision: number) => Promise<RecordedEvent[]>,
    fromRevision: number,
    private readonly onEvent: OnEvent,
    private readonly onError: (error: Error) => void,
    private readonly poll?: Poll,
  ) {
    this.next = fromRevision;
    this.delay = poll?.minMs ?? 0;
    this.wake();
  }

  /** The next look: soon after one that found events, twice as late (up to maxMs) after an idle one. */
  private schedule(found: boolean): void {
    if (!this.poll || this.closed) return;
    this.delay = found ? this.poll.minMs : Math.min(this.poll.maxMs, this.delay * 2);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), this.delay).unref();
  }

  skipTo(revision: number): void {
    this.next = Math.max(this.next, revision);
  }

  /** Whether it is already past `revision` of its stream (its subscriber folded that append itself). */
  past(revision: number): boolean {
    return this.next > revision;
  }

  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.drain().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async drain(): Promise<void> {
    let found = false;
    try {
      for (;;) {
        const batch = await this.read(this.next);
        for (const event of batch) {
          if (this.closed) return;
          this.next = event.revision + 1;
          this.onEvent(event);
        }
        found ||= batch.length > 0;
        if (batch.length === 0 || this.closed) break;
      }
    } catch (error) {
      this.onError(error as Error);
    }
    this.schedule(found);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
  }
}

/** The catch-up subscriptions of one store: woken together after an append, closed together with the store. */
export class Subscribers {
  private readonly live = new Set<CatchUpSubscription>();

  add(
    stream: string,
    read: (fromRevision: number) => Promise<RecordedEvent[]>,
    fromRevision: number,
    onEvent: OnEvent,
    onError: (e: Error) => void,
    poll?: Poll,
  ): Subscription {
    const subscription = new CatchUpSubscription(stream, read, fromRevision, onEvent, onError, poll);
    this.live.add(subscription);
    return {
      close: async () => {
        this.live.delete(subscription);
        await subscription.close();
      },
      skipTo: (revision) => subscription.skipTo(revision),
    };
  }

  /**
   * After an append by this process: wakes the subscriptions once the appending code has run on, so
   * that a subscriber which folds its own appends (the projector) has done so and is not sent them.
   * With `written` (the last revision this process wrote to each stream, up to the append), those
   * already past it are left to sleep: the append has nothing for them (they folded it, or it went
   * to another stream), and other processes' appends come with their next poll (bench/http.ts
   * patch: an empty read after every flush is work for nothing).
   */
  wakeAll(written?: ReadonlyMap<string, number>): void {
    setImmediate(() => {
      for (const subscription of this.live) {
        if (written && subscription.past(written.get(subscription.stream) ?? -1)) continue;
        subscription.wake();
      }
    });
  }

  async closeAll(): Promise<void> {
    for (const subscription of this.live) await subscription.close();
    this.live.clear();
  }
}
