import type { Logger } from 'pino';
import type { ChangeItem, ConfigService } from '../application/service.js';
import type { WebhookSettings } from '../config.js';
import type { EntryRecord } from '../engine/table.js';
import type { DeliveryLedger } from './ledger.js';
import type { Rule } from './matching.js';
import type { TargetPolicy } from './target.js';

/** Outcomes counted by `pmacontrol_webhook_deliveries_total`. */
export type Outcome = 'delivered' | 'failed' | 'dead';

export interface DelivererParts {
  service: ConfigService;
  ledger: DeliveryLedger;
  settings: WebhookSettings;
  policy: TargetPolicy;
  logger: Logger;
  /** Counts an attempt's outcome. */
  count: (rule: Rule, outcome: Outcome) => void;
}

/**
 * A promise that resolves when something happens, or after `ms`. `sticky`: a fire with nobody
 * waiting is kept for the next wait (a worker told of a change just before it waits).
 */
export class Signal {
  private waiters: (() => void)[] = [];
  private pending = false;

  constructor(private readonly sticky = false) {}

  fire(): void {
    const waiters = this.waiters;
    this.waiters = [];
    if (waiters.length === 0 && this.sticky) this.pending = true;
    for (const wake of waiters) wake();
  }

  /** Forgets a fire kept for the next wait (what it announced is about to be read). */
  reset(): void {
    this.pending = false;
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }
}

/** What a rule's worker (worker.ts) is given by the deliverer (deliverer.ts). */
export interface WorkerHost {
  readonly parts: DelivererParts;
  readonly holder: string;
  /** Fired when the instance stops delivering (or a worker stops): every wait ends. */
  readonly changed: Signal;
  /** Ends the attempts in flight when the instance stops. */
  readonly stopping: AbortController;
  /** Whether this instance holds the lease and is not stopping. */
  readonly active: boolean;
  rule(id: number): Rule | undefined;
  page(cursor: number): Promise<ChangeItem[]>;
  entryAfter(item: ChangeItem): Promise<EntryRecord | undefined>;
  /** The entry as it is now, if no change came after `item` (else undefined). */
  entryNow(item: ChangeItem): EntryRecord | undefined;
}
