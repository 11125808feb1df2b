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

/** A promise that resolves when something happens, or after `ms`. */
export class Signal {
  private waiters: (() => void)[] = [];

  fire(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  wait(ms: number): Promise<void> {
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
  /** Fired on every event the instance folds, and on stop. */
  readonly changed: Signal;
  /** Ends the attempts in flight when the instance stops. */
  readonly stopping: AbortController;
  /** Whether this instance holds the lease and is not stopping. */
  readonly active: boolean;
  rule(id: number): Rule | undefined;
  page(cursor: number): Promise<ChangeItem[]>;
  entryAfter(item: ChangeItem): Promise<EntryRecord | undefined>;
}
