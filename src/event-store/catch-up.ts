import type { OnEvent, RecordedEvent, Subscription } from './port.js';

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

  constructor(
    private readonly read: (fromRevision: number) => Promise<RecordedEvent[]>,
    fromRevision: number,
    private readonly onEvent: OnEvent,
    private readonly onError: (error: Error) => void,
    pollMs?: number,
  ) {
    this.next = fromRevision;
    if (pollMs) {
      this.timer = setInterval(() => this.wake(), pollMs);
      this.timer.unref();
    }
    this.wake();
  }

  skipTo(revision: number): void {
    this.next = Math.max(this.next, revision);
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
    try {
      for (;;) {
        const batch = await this.read(this.next);
        for (const event of batch) {
          if (this.closed) return;
          this.next = event.revision + 1;
          this.onEvent(event);
        }
        if (batch.length === 0 || this.closed) return;
      }
    } catch (error) {
      this.onError(error as Error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
  }
}

/** The catch-up subscriptions of one store: woken together after an append, closed together with the store. */
export class Subscribers {
  private readonly live = new Set<CatchUpSubscription>();

  add(
    read: (fromRevision: number) => Promise<RecordedEvent[]>,
    fromRevision: number,
    onEvent: OnEvent,
    onError: (e: Error) => void,
    pollMs?: number,
  ): Subscription {
    const subscription = new CatchUpSubscription(read, fromRevision, onEvent, onError, pollMs);
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
   */
  wakeAll(): void {
    setImmediate(() => {
      for (const subscription of this.live) subscription.wake();
    });
  }

  async closeAll(): Promise<void> {
    for (const subscription of this.live) await subscription.close();
    this.live.clear();
  }
}
