import type { ChangeItem } from '../application/service.js';
import { Signal, type WorkerHost } from './host.js';
import { type Delivery, REPLAYED } from './ledger.js';
import { deliveryBody, matches, matchesNow, type Rule } from './matching.js';
import { post } from './send.js';

/** Back-off before attempt n + 1: 1 s, doubling, at most 10 minutes. */
export const backoffMs = (attempts: number): number => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 600_000);
/** A cursor with nothing delivered since is saved at most this often (a restart reads a few changes again). */
const SAVE_EVERY_MS = 1000;
/** How long a worker waits after the first change of a burst before it reads them (bench/webhooks.ts). */
const GATHER_MS = 10;
/** After an error of the ledger or the change log, the worker starts again after this. */
const PAUSE_MS = 1000;

/**
 * One enabled rule's delivery, in log order from its cursor: each matching change POSTed (at most
 * WEBHOOK_IN_FLIGHT at once), retried with back-off until delivered or dead, each outcome recorded in
 * the ledger, the cursor moved past a page once every change of it is settled.
 */
export class RuleWorker {
  running = true;
  /** The position up to which every change is settled, as this worker knows it. */
  private cursor = 0;
  /** The cursor as the ledger has it. */
  private saved: number | undefined;
  private savedAt = 0;
  private rewound = false;
  /** The enabling the cursor was set from. */
  private sinceUsed = 0;
  private loop?: Promise<void>;
  /** Told of new changes (offer), and of the stop. */
  private readonly wake = new Signal(true);
  /** The cursor at which the worker waits for changes after the last one it read, if it does. */
  private idleAt?: number;
  private enabledSince?: { version: number; position: number };

  constructor(
    readonly id: number,
    private readonly deliverer: WorkerHost,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake.fire();
    this.deliverer.changed.fire();
    await this.loop;
  }

  /**
   * Changes just folded. A worker waiting at the head passes over those that cannot match here,
   * without waking (many rules, few matches: bench/webhooks.ts); any other case wakes it.
   */
  offer(items: ChangeItem[]): void {
    if (items.length === 0) return;
    const rule = this.idleAt === this.cursor ? this.deliverer.rule(this.id) : undefined;
    const passed =
      rule?.enabled &&
      items.every(
        (item) => item.position <= this.cursor || matchesNow(rule, item, this.deliverer.entryNow(item)) === false,
      );
    if (!passed) {
      this.wake.fire();
      return;
    }
    this.cursor = Math.max(this.cursor, items[items.length - 1].position);
    this.idleAt = this.cursor;
  }

  lag(head: number): number {
    return Math.max(0, head - this.cursor);
  }

  /** The ledger's cursor, read by the lease loop: one moved back (a replay) restarts the worker there. */
  notice(cursor: number): void {
    if (this.saved === undefined || cursor === this.saved) return;
    this.rewound = true;
    this.wake.fire();
  }

  private get live(): boolean {
    return this.running && this.deliverer.active;
  }

  private async run(): Promise<void> {
    const { logger } = this.deliverer.parts;
    while (this.live) {
      try {
        await this.begin();
        while (this.live && !this.rewound) await this.step();
      } catch (error) {
        logger.warn({ rule: this.id, err: { message: (error as Error).message } }, 'event rules: delivery paused');
        await this.deliverer.changed.wait(PAUSE_MS);
      }
    }
    this.running = false;
  }

  /**
   * The cursor from the ledger; where the rule was enabled since that cursor was set (or it has none),
   * moved there if it is before: the changes made while a rule was disabled are not sent, those
   * before a replay's position are.
   */
  private async begin(): Promise<void> {
    const { ledger } = this.deliverer.parts;
    this.rewound = false;
    const progress = await ledger.progress(this.id);
    const since = await this.since();
    this.saved = progress?.cursor;
    const kept = progress && (progress.since === since || progress.since === REPLAYED);
    this.cursor = kept ? progress.cursor : Math.max(progress?.cursor ?? 0, since);
    this.sinceUsed = since;
    if (progress?.since !== since) this.savedAt = 0;
    await this.save(progress?.since !== since);
  }

  /** The position of the change that last enabled the rule (its creation, or `enabled` set to true). */
  private async since(): Promise<number> {
    const rule = this.deliverer.rule(this.id);
    if (!rule) return this.cursor;
    if (this.enabledSince?.version === rule.version) return this.enabledSince.position;
    const history = await this.deliverer.parts.service.history('event-rules', this.id);
    let position = history[0]?.position ?? 0;
    for (const item of history) {
      if (item.diff.some((member) => member.field === 'enabled' && member.after === true)) position = item.position;
    }
    this.enabledSince = { version: rule.version, position };
    return position;
  }

  /** One page of changes after the cursor, delivered; waits for the next change when there is none. */
  private async step(): Promise<void> {
    const rule = this.deliverer.rule(this.id);
    if (!rule?.enabled) {
      this.running = false;
      return;
    }
    if ((await this.since()) !== this.sinceUsed) {
      this.rewound = true; // enabled again: begin from there
      return;
    }
    // Whatever was offered so far is in the tail this page is read from: only later offers wake again.
    this.wake.reset();
    const items = await this.deliverer.page(this.cursor);
    if (items.length === 0) {
      this.idleAt = this.cursor;
      await this.save(false);
      await this.wake.wait(SAVE_EVERY_MS);
      this.idleAt = undefined;
      // Changes come in bursts: a moment more gathers them into one page (fewer turns for many rules).
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      return;
    }
    const last = items[items.length - 1].position;
    const matching: ChangeItem[] = [];
    for (const item of items) if (await matches(rule, item, this.deliverer.entryAfter)) matching.push(item);
    const known =
      matching.length > 0 ? await this.deliverer.parts.ledger.between(this.id, this.cursor, last) : new Map();
    const delivered = await this.deliverPage(rule, matching, known);
    if (!this.live || this.rewound) return;
    this.cursor = last;
    await this.save(delivered);
  }

  /** The matching changes of a page not yet settled, at most WEBHOOK_IN_FLIGHT at once; whether any was sent. */
  private async deliverPage(rule: Rule, items: ChangeItem[], known: Map<number, Delivery>): Promise<boolean> {
    const { settings } = this.deliverer.parts;
    const inFlight = new Set<Promise<void>>();
    let sent = false;
    for (const item of items) {
      if (!this.live || this.rewound) break;
      const before = known.get(item.position);
      if (before?.state === 'delivered' || before?.state === 'dead') continue;
      sent = true;
      const one: Promise<void> = this.deliver(rule, item, before).finally(() => inFlight.delete(one));
      inFlight.add(one);
      while (inFlight.size >= settings.inFlight) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    return sent;
  }

  /** One change delivered or dead (retried meanwhile), each attempt recorded; stops with the worker. */
  private async deliver(rule: Rule, item: ChangeItem, before: Delivery | undefined): Promise<void> {
    const { ledger } = this.deliverer.parts;
    let delivery = before;
    if (delivery?.next_at) await this.pause(Date.parse(delivery.next_at) - Date.now());
    while (this.live && !this.rewound) {
      // The rule as it is now: a new target or key applies from the next attempt; disabled, it stops.
      const current = this.deliverer.rule(rule.id);
      if (!current?.enabled) {
        this.running = false;
        return;
      }
      delivery = await RuleWorker.attempt(this.deliverer, current, item, delivery);
      // An attempt cut short because this instance stops is not the receiver's failure: not recorded.
      if (this.deliverer.stopping.signal.aborted && delivery.state !== 'delivered') return;
      if (!(await ledger.record(this.deliverer.holder, delivery))) {
        this.running = false;
        return;
      }
      if (delivery.state !== 'retrying') return;
      await this.pause(Date.parse(delivery.next_at!) - Date.now());
    }
  }

  private async pause(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.live && !this.rewound && Date.now() < until) await this.deliverer.changed.wait(until - Date.now());
  }

  /** Saves the cursor when it moved: now if `now`, else at most every SAVE_EVERY_MS. */
  private async save(now: boolean): Promise<void> {
    if (!now && (this.saved === this.cursor || Date.now() - this.savedAt < SAVE_EVERY_MS)) return;
    const { ledger } = this.deliverer.parts;
    // What is written: an offer may move the cursor on while the ledger answers.
    const to = this.cursor;
    if (await ledger.advance(this.deliverer.holder, this.id, this.saved, to, this.sinceUsed)) {
      this.saved = to;
      this.savedAt = Date.now();
    } else if (this.deliverer.active) this.rewound = true;
  }

  /** One POST of a change; the delivery as it stands after it (delivered, retrying, or dead). */
  static async attempt(deliverer: WorkerHost, rule: Rule, item: ChangeItem, before?: Delivery): Promise<Delivery> {
    const { service, settings, policy, count } = deliverer.parts;
    const now = Date.now();
    const first = before?.first_at ?? new Date(now).toISOString();
    const attempts = (before?.attempts ?? 0) + 1;
    const secret = service.openSecret(rule.secret);
    const result = secret
      ? await post({
          url: rule.url,
          secret,
          id: `${rule.id}-${item.position}`,
          body: deliveryBody(rule, item),
          timeoutMs: settings.timeoutMs,
          policy,
          timestamp: Math.floor(now / 1000),
          signal: deliverer.stopping.signal,
        })
      : { delivered: false, status: null, error: "the rule's signing key does not open with this instance's key" };
    const base = { rule: rule.id, position: item.position, attempts, last_status: result.status, first_at: first };
    count(rule, result.delivered ? 'delivered' : 'failed');
    if (result.delivered) return { ...base, state: 'delivered', last_error: null, next_at: null };
    if (Date.now() - Date.parse(first) >= settings.giveUpAfterMs) {
      count(rule, 'dead');
      return { ...base, state: 'dead', last_error: result.error, next_at: null };
    }
    const next = new Date(Date.now() + backoffMs(attempts)).toISOString();
    return { ...base, state: 'retrying', last_error: result.error, next_at: next };
  }
}
