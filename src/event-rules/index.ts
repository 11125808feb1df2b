import type { Logger } from 'pino';
import type { ConfigService } from '../application/service.js';
import type { Config } from '../config.js';
import { eventRuleChecks } from './checks.js';
import { Deliverer } from './deliverer.js';
import type { Outcome } from './host.js';
import type { DeliveryLedger } from './ledger.js';

/**
 * Event rules and webhooks (section 15), a wing of its own: the rules are entries of the core (their
 * declaration, src/domain/event-rules/resource.ts); this wing checks them on every write
 * (checks.ts), matches changes (matching.ts), delivers them signed (send.ts, behind the target
 * policy of target.ts) from the instance that holds the lease (deliverer.ts, worker.ts), keeps the
 * cursors and deliveries in a ledger beside the log (ledger.ts; sqlite-ledger.ts, mariadb-ledger.ts,
 * picked by main.ts), and serves the operator's routes (routes.ts, operations.ts).
 */
export { eventRulesRoutes } from './routes.js';

export interface EventRulesParts {
  service: ConfigService;
  ledger: DeliveryLedger;
  logger: Logger;
  /** The port this instance listens on, once it listens (a rule may not send to the service itself). */
  ownPort: () => number | undefined;
  gauge: (name: string, help: string, read: () => number) => void;
  counter: (name: string, help: string, labels: string[]) => (values: Record<string, string>) => void;
}

export interface EventRules {
  ledger: DeliveryLedger;
  holder: string;
  /** Starts delivering (once the instance serves). */
  start(): void;
  stop(): Promise<void>;
}

/** The event rules of an instance: their checks plugged into every write, their delivery made ready. */
export function eventRules(config: Config, parts: EventRulesParts): EventRules {
  const { service, ledger, logger } = parts;
  service.write.addRules(eventRuleChecks(config.webhooks));
  const deliveries = parts.counter(
    'pmacontrol_webhook_deliveries_total',
    "Attempts to deliver a change to an event rule's target, by rule and outcome (delivered, failed, dead)",
    ['rule', 'outcome'],
  );
  const deliverer = new Deliverer({
    service,
    ledger,
    settings: config.webhooks,
    policy: { allowedHosts: config.webhooks.allowedHosts, ownPort: parts.ownPort },
    logger,
    count: (rule, outcome: Outcome) => deliveries({ rule: String(rule.id), outcome }),
  });
  parts.gauge(
    'pmacontrol_webhook_lag_events',
    'Events of the log the most behind enabled event rule has not settled yet (0 where this instance does not deliver)',
    () => deliverer.lag(),
  );
  return {
    ledger,
    holder: deliverer.holder,
    start: () => deliverer.start(),
    stop: async () => {
      await deliverer.stop();
      await ledger.close();
    },
  };
}
