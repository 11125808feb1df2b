import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { ChangeItem } from '../application/service.js';
import type { ResourceName } from '../domain/resources.js';
import type { EntryRecord } from '../engine/table.js';
import { type DelivererParts, Signal, type WorkerHost } from './host.js';
import type { Delivery } from './ledger.js';
import { type Rule, ruleOf } from './matching.js';
import { Tail } from './tail.js';
import { RuleWorker } from './worker.js';

/** How long the lease lasts, and how often the holder renews it (a third of it). */
export const LEASE_MS = 10_000;
const RENEW_MS = LEASE_MS / 3;
/** Entries after a change kept for the rules that ask (the oldest forgotten first). */
const ENTRIES_KEPT = 4096;
/** Delivered changes listed per rule (older ones are forgotten; retrying, dead and pending ones stay). */
export const KEPT_DELIVERED = 10_000;
const PRUNE_EVERY_MS = 60_000;
/** Changes read at once by a rule's worker. */
export const PAGE = 200;

/**
 * The delivery of every enabled rule, by the one instance that holds the lease (section 15): a
 * worker per rule (worker.ts), each in log order from its cursor, so that a slow or dead receiver
 * holds only its own rule; the redeliveries asked for; the lease renewed every third of it. Losing
 * the lease stops every worker: the next holder resumes at the cursors.
 */
export class Deliverer implements WorkerHost {
  readonly holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  /** Fired when the instance stops delivering (or a worker stops): every wait ends. */
  readonly changed = new Signal();
  /** Ends the attempts in flight when the instance stops. */
  readonly stopping = new AbortController();
  private holding = false;
  private stopped = false;
  private readonly workers = new Map<number, RuleWorker>();
  private readonly pages = new Map<number, Promise<ChangeItem[]>>();
  private readonly entries = new Map<string, Promise<EntryRecord | undefined>>();
  private pagesHead = -1;
  private tail?: Tail;
  private unfollow?: () => void;
  private prunedAt = 0;
  private loop?: Promise<void>;
  private redelivering?: Promise<void>;

  constructor(readonly parts: DelivererParts) {
    // Every attempt in flight listens for the stop: as many as rules × WEBHOOK_IN_FLIGHT.
    setMaxListeners(0, this.stopping.signal);
  }

  get active(): boolean {
    return this.holding && !this.stopped;
  }

  /** The position of the last event this instance folded. */
  get head(): number {
    return this.parts.service.revision + 1;
  }

  start(): void {
    this.parts.service.projector.listen(() => {
      if (this.holding) this.syncWorkers();
    });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unfollowTail();
    this.stopping.abort();
    this.changed.fire();
    await this.loop;
    await Promise.all([...this.workers.values()].map((worker) => worker.stop()));
    await this.redelivering;
    if (this.holding) await this.parts.ledger.release(this.holder).catch(() => {});
  }

  /** The rule of this id as the configuration holds it now, if it exists. */
  rule(id: number): Rule | undefined {
    const entry = this.parts.service.state.collections['event-rules'].get(id);
    return entry ? ruleOf(entry) : undefined;
  }

  /** The changes after `cursor` (a page): from the live tail, else read once for every worker at that cursor. */
  page(cursor: number): Promise<ChangeItem[]> {
    const live = this.tail?.after(cursor, PAGE);
    if (live) return Promise.resolve(live);
    if (this.pagesHead !== this.head) {
      this.pages.clear();
      this.pagesHead = this.head;
    }
    let page = this.pages.get(cursor);
    if (!page) {
      page = (async () => {
        const items: ChangeItem[] = [];
        for await (const item of this.parts.service.changes.changes({ after: cursor, order: 'asc', admin: true })) {
          items.push(item);
          if (items.length >= PAGE) break;
        }
        return items;
      })();
      page.catch(() => this.pages.delete(cursor));
      this.pages.set(cursor, page);
    }
    return page;
  }

  /**
   * The entry as a change left it (its version at the change's revision), read once for every rule
   * that asks about that change (bench/webhooks.ts: ten rules testing `in` on a field the change left alone).
   */
  readonly entryAfter = (item: ChangeItem): Promise<EntryRecord | undefined> => {
    if (item.resource === null || item.id === null || item.revision === null) return Promise.resolve(undefined);
    // The entry as the change left it, kept when it was folded, or as it is now if no change came
    // after: no read of the change log (which waits for the read models' save).
    const now = this.tail?.entryAt(item.position) ?? this.entryNow(item);
    if (now) return Promise.resolve(now);
    const key = `${item.position}/${item.resource}/${item.id}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = this.parts.service.changes.versionOf(item.resource as ResourceName, item.id, item.revision);
      entry.catch(() => this.entries.delete(key)); // asked again next time
      this.entries.set(key, entry);
      if (this.entries.size > ENTRIES_KEPT) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  };

  entryNow(item: ChangeItem): EntryRecord | undefined {
    if (item.resource === null || item.id === null) return undefined;
    const now = this.parts.service.state.collections[item.resource as ResourceName]?.get(item.id);
    return now && now.version === item.revision ? now : undefined;
  }

  /** Events each enabled rule has not settled yet, the largest (`pmacontrol_webhook_lag_events`; 0 when not delivering). */
  lag(): number {
    let most = 0;
    for (const worker of this.workers.values()) most = Math.max(most, worker.lag(this.head));
    return most;
  }

  /** The lease taken or renewed every third of it; the workers follow the enabled rules while it is held. */
  private async run(): Promise<void> {
    const { ledger, logger } = this.parts;
    while (!this.stopped) {
      const held = await ledger.lease(this.holder, LEASE_MS).catch((error) => {
        logger.warn({ err: { message: (error as Error).message } }, 'event rules: the lease cannot be renewed');
        return false;
      });
      if (held !== this.holding) {
        this.holding = held;
        logger.info(
          { holder: this.holder },
          held ? 'event rules: delivering' : 'event rules: another instance delivers',
        );
        if (!held) await this.stopWorkers();
      }
      if (held && !this.stopped) {
        this.syncWorkers();
        await this.noticeRewinds();
        await this.prune();
        this.redelivering ??= this.redeliver().finally(() => {
          this.redelivering = undefined;
        });
      }
      await this.changedOrStopped(RENEW_MS);
    }
  }

  private async changedOrStopped(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) await this.changed.wait(until - Date.now());
  }

  /** A worker for every enabled rule, none for the others. */
  private syncWorkers(): void {
    if (this.stopped) return;
    const enabled = new Set<number>();
    for (const entry of this.parts.service.state.collections['event-rules'].inOrder()) {
      if (entry.enabled) enabled.add(entry.id);
    }
    for (const [id, worker] of this.workers) {
      if (!enabled.has(id) || !worker.running) {
        void worker.stop();
        this.workers.delete(id);
      }
    }
    // The live tail is kept only while some rule delivers here (making it costs every batch a little).
    if (enabled.size > 0) this.follow();
    for (const id of enabled) {
      if (!this.workers.has(id)) {
        const worker = new RuleWorker(id, this);
        this.workers.set(id, worker);
        worker.start();
      }
    }
    if (this.workers.size === 0) this.unfollowTail();
  }

  /** Follows the changes folded from now on into the tail, and offers them to the workers. */
  private follow(): void {
    if (this.unfollow) return;
    this.tail = new Tail(this.head);
    this.unfollow = this.parts.service.feed.follow((items) => {
      this.tail?.add(items, (item) => this.entryNow(item));
      for (const worker of this.workers.values()) worker.offer(items);
    });
  }

  private unfollowTail(): void {
    this.unfollow?.();
    this.unfollow = undefined;
    this.tail = undefined;
  }

  private async stopWorkers(): Promise<void> {
    const workers = [...this.workers.values()];
    this.workers.clear();
    this.unfollowTail();
    await Promise.all(workers.map((worker) => worker.stop()));
  }

  /** Every PRUNE_EVERY_MS, each rule's delivered changes but the latest KEPT_DELIVERED forgotten. */
  private async prune(): Promise<void> {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    for (const rule of this.workers.keys()) {
      await this.parts.ledger.prune(rule, KEPT_DELIVERED).catch(() => {});
    }
  }

  /** A replay asked on any instance moved a cursor back: its worker starts again from there. */
  private async noticeRewinds(): Promise<void> {
    const progress = await this.parts.ledger.allProgress().catch(() => []);
    for (const { rule, cursor } of progress) this.workers.get(rule)?.notice(cursor);
  }

  /** The redeliveries asked for and due, one attempt each per round. */
  private async redeliver(): Promise<void> {
    const { ledger, logger } = this.parts;
    try {
      const due = (await ledger.redeliveries(20)).filter((d) => !d.next_at || Date.parse(d.next_at) <= Date.now());
      for (const delivery of due) {
        if (!this.active) return;
        await this.redeliverOne(delivery);
      }
    } catch (error) {
      logger.warn({ err: { message: (error as Error).message } }, 'event rules: a redelivery failed');
    }
  }

  private async redeliverOne(asked: Delivery): Promise<void> {
    const rule = this.rule(asked.rule);
    const item = rule ? (await this.page(asked.position - 1))[0] : undefined;
    const { ledger } = this.parts;
    if (!rule || !item || item.position !== asked.position) {
      const error = rule ? 'no change at this position' : 'the rule no longer exists';
      await ledger.record(this.holder, { ...asked, state: 'dead', last_error: error, next_at: null });
      return;
    }
    const outcome = await RuleWorker.attempt(this, rule, item, asked);
    await ledger.record(this.holder, outcome, outcome.state === 'retrying');
  }
}
