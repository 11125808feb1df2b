import type { Context, Next } from 'koa';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ConfigService } from '../application/service.js';
import type { EventStore } from '../event-store/port.js';
import { routeOf } from './middleware.js';
import { refuseQuery } from './request.js';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** How long /readyz waits for the event store before it says the store does not answer. */
const STORE_TIMEOUT_MS = 2000;

/**
 * prom-client's sums of the per-type gauges, named like counters (`_total`), which `promtool check
 * metrics` refuses; the per-type gauges themselves (`nodejs_active_handles{type}` …) stay.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Heads of the log seen and not folded yet, at most: the oldest and the newest are what count. */
const MAX_SEEN = 100;

/**
 * How long this instance has been behind the log: since it first saw, in the store, an event it has
 * not folded yet. An instance that folds what other instances write a few milliseconds after them
 * is always a little behind, and never long.
 */
export class Lag {
  private seen: { head: number; since: number }[] = [];

  /** Records the store's `head` against the revision `folded`; the lag in ms. */
  observe(head: number, folded: number, now = performance.now()): number {
    this.seen = this.seen.filter((one) => one.head > folded);
    const newest = this.seen.at(-1);
    if (head > folded && (!newest || newest.head < head)) {
      if (this.seen.length >= MAX_SEEN) this.seen.pop();
      this.seen.push({ head, since: now });
    }
    return this.seen.length === 0 ? 0 : now - this.seen[0].since;
  }
}

/**
 * Whether this instance serves: /readyz answers 503 from the first moment of a graceful stop, and
 * while it lags the log longer than `maxLagMs` (READY_MAX_LAG_MS).
 */
export class Readiness {
  stopping = false;
  readonly lag = new Lag();
  private readonly checks: (() => string | undefined)[] = [];

  constructor(readonly maxLagMs = 2000) {}

  /** The plug point of a wing's readiness (PmaControl's projection blocked): a reason not to be ready, or undefined. */
  add(check: () => string | undefined): void {
    this.checks.push(check);
  }

  /** The first reason a wing gives not to be ready. */
  wingReason(): string | undefined {
    for (const check of this.checks) {
      const reason = check();
      if (reason) return reason;
    }
    return undefined;
  }
}

/**
 * The service's Prometheus metrics, in a registry of its own (one per app): requests by route
 * template (never the raw path), method and status; request and append latency; events appended;
 * the projected position and how far behind the log this instance is; the build; Node's process and
 * runtime metrics under their standard names (`process_*`, `nodejs_*`).
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'pmacontrol_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'pmacontrol_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by route template and method',
    labelNames: ['route', 'method'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly appendLatency = new Histogram({
    name: 'pmacontrol_event_store_append_duration_seconds',
    help: 'Time an append to the event store takes, durable write included',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly appended = new Counter({
    name: 'pmacontrol_events_appended_total',
    help: 'Events this instance appended to the log',
    registers: [this.registry],
  });

  /** `version`: the running release, for `pmacontrol_build_info`. */
  constructor(version: string) {
    collectDefaultMetrics({ register: this.registry });
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    new Gauge({
      name: 'pmacontrol_build_info',
      help: 'Always 1; the label names the running release',
      labelNames: ['version'],
      registers: [this.registry],
    }).set({ version }, 1);
  }

  /** Adds the gauges read from the running service: its position and how far behind the log it is. */
  watch(service: ConfigService): this {
    new Gauge({
      name: 'pmacontrol_projected_position',
      help: 'Position of the last event this instance has folded into its state and read models',
      registers: [this.registry],
      collect() {
        this.set(service.revision + 1);
      },
    });
    new Gauge({
      name: 'pmacontrol_feed_clients',
      help: 'Live change feed clients this instance serves',
      registers: [this.registry],
      collect() {
        this.set(service.feed.clients);
      },
    });
    new Gauge({
      name: 'pmacontrol_follow_lag_events',
      help: 'Events in the log that this instance has not folded yet (-1: the store does not answer)',
      registers: [this.registry],
      async collect() {
        const head = await service.storeHead(STORE_TIMEOUT_MS).catch(() => undefined);
        this.set(head === undefined ? -1 : Math.max(0, head - service.revision));
      },
    });
    return this;
  }

  /** Adds a gauge read when scraped (a wing's: how far behind the log it is). Its name carries the `pmacontrol_` prefix. */
  gauge(name: string, help: string, read: () => number): this {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
    return this;
  }

  /** Adds a counter with labels (a wing's: webhook deliveries by rule and outcome); returns how to count one. */
  counter(name: string, help: string, labelNames: string[]): (labels: Record<string, string>) => void {
    const counter = new Counter({ name, help, labelNames, registers: [this.registry] });
    return (labels) => counter.inc(labels);
  }

  /** Middleware: counts and times every request under its route template ("unmatched" for a 404). */
  measure() {
    return async (ctx: Context, next: Next) => {
      const started = performance.now();
      try {
        await next();
      } finally {
        const route = routeOf(ctx) ?? 'unmatched';
        this.record(route, ctx.method, ctx.status, started);
      }
    };
  }

  /** One answered request; `started` is `performance.now()` when it came in (the fast read path calls this too). */
  record(route: string, method: string, status: number, started: number): void {
    this.latency.observe({ route, method }, (performance.now() - started) / 1000);
    this.requests.inc({ route, method, status });
  }

  /** The store, with every append timed until it is on disk, and counted. */
  measured(store: EventStore): EventStore {
    const metrics = this;
    return new Proxy(store, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key !== 'append') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<EventStore['append']>) => {
          const stop = metrics.appendLatency.startTimer();
          try {
            const result = await target.append(...args);
            metrics.appended.inc(args[1].length);
            return result;
          } finally {
            stop();
          }
        };
      },
    });
  }
}

export function healthz(ctx: Context): void {
  refuseQuery(ctx);
  ctx.body = { status: 'ok' };
}

/**
 * Ready: not stopping, the event store answers, and this instance folds the log: it may be behind
 * what other instances have just written, for READY_MAX_LAG_MS at most.
 */
export async function readyz(ctx: Context, service: ConfigService, readiness: Readiness): Promise<void> {
  refuseQuery(ctx);
  const notReady = (reason: string) => {
    ctx.status = 503;
    ctx.body = { status: 'not_ready', reason };
  };
  if (readiness.stopping) return notReady('stopping');
  if (service.keyRotated) return notReady('the secret key was rotated: restart this instance with the new key');
  if (service.repairing) return notReady('rebuilding the stored read models from the log: damage was found in them');
  const wing = readiness.wingReason();
  if (wing) return notReady(wing);
  let head: number;
  try {
    head = await service.storeHead(STORE_TIMEOUT_MS);
  } catch (error) {
    return notReady(`the event store does not answer: ${(error as Error).message}`);
  }
  const folded = service.revision;
  const lagMs = readiness.lag.observe(head, folded);
  if (lagMs > readiness.maxLagMs) {
    return notReady(`catching up: ${head - folded} events not folded yet, behind for ${Math.round(lagMs)} ms`);
  }
  ctx.body = { status: 'ready', position: folded + 1 };
}

export async function metrics(ctx: Context, registry: Registry): Promise<void> {
  refuseQuery(ctx);
  ctx.type = registry.contentType;
  ctx.body = await registry.metrics();
}
