/**
 * The composition root, in the order a start runs: the stores (stores.ts), the service, the wings,
 * the HTTP server; and the stop.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { type Logger, pino } from 'pino';
import { openRetiredKeys, openSecretKey } from './application/secret-key.js';
import { ConfigService, type ParseWrite } from './application/service.js';
import { approvals, approvalsRoutes } from './approvals/index.js';
import { approvedMerge, changeSets, changeSetsRoutes } from './change-sets/index.js';
import type { Config } from './config.js';
import { assertMayServe, assertServes, recordStore } from './data-dir.js';
import { type EventRules, eventRules, eventRulesRoutes } from './event-rules/index.js';
import type { DeliveryLedger } from './event-rules/ledger.js';
import { sqliteLedger } from './event-rules/sqlite-ledger.js';
import { createHandler } from './http/app.js';
import { hostCheck } from './http/hosts.js';
import { Metrics, Readiness } from './http/operations.js';
import type { RouteModule } from './http/route-module.js';
import { type Listening, listen, stopListening } from './http/server.js';
import { leafOf, logRoutes, openLogKey, startLog, type VerifiableLog } from './log/index.js';
import { buildOpenApi } from './openapi/build.js';
import {
  type PmaControlProjection,
  pmacontrolOpener,
  pmacontrolProjection,
  pmacontrolRoutes,
  pmacontrolUrl,
} from './pmacontrol/index.js';
import { WriteValidator } from './schemas/validator.js';
import { type Finder, finder, searchRoutes } from './search/index.js';
import { openStores, progressLog, repairLog, type Stores } from './stores.js';

export {
  openEventStore,
  openLogReader,
  openStores,
  openTargetStore,
  readModelsFile,
  type Stores,
} from './stores.js';

/** The gates of every gated write, in their order: change sets stage, then approvals hold (their merges too). */
function plugGates(service: ConfigService): void {
  changeSets(service);
  approvals(service, { 'change-set-merge': approvedMerge(service) });
}

export function packageVersion(): string {
  // src/main.ts in development, dist/src/main.js once built: the package's own file is above either.
  for (const up of ['../package.json', '../../package.json']) {
    const file = new URL(up, import.meta.url);
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

export const createLogger = (level: string): Logger => pino({ level, base: { service: 'pmacontrol-config' } });

export interface Running {
  server: Server;
  port: number;
  service: ConfigService;
  close(): Promise<void>;
  /** A graceful stop: not ready at once, serving for `drainMs` (SHUTDOWN_DRAIN_MS), then `close`. */
  shutdown(drainMs?: number): Promise<void>;
}

/** Opens the stores and brings the service to the head of the log; the stores are closed if that fails. */
async function startService(config: Config, logger: Logger, stores: Stores): Promise<ConfigService> {
  const { store, readModels } = stores;
  const service = new ConfigService({
    store,
    readModels,
    leafOf,
    secretKey: (recorded) => openSecretKey({ fromEnv: config.secretKey, dataDir: config.dataDir }, recorded),
    retiredKeys: () => openRetiredKeys({ retiredFromEnv: config.retiredSecretKeys, dataDir: config.dataDir }),
    clock: { now: () => new Date() },
    onProgress: progressLog(logger),
    onBackgroundError: (error) =>
      logger.error({ err: { name: error.name, message: error.message } }, 'projection error'),
    feed: { maxSubscribers: config.http.maxSubscribers, maxBufferedBytes: config.http.feedMaxBufferBytes },
    onRepair: repairLog(logger, readModels.location),
  });
  try {
    await service.start();
    plugGates(service);
    await stores.synced;
  } catch (error) {
    await store.close();
    readModels.close();
    stores.lock.release();
    await stores.synced.catch(() => {}); // as in openStores
    throw error;
  }
  return service;
}

/** The service without HTTP, for a command that writes through it (it follows the log like any instance). */
export async function openService(
  config: Config,
  logger: Logger,
): Promise<{ service: ConfigService; close(): Promise<void> }> {
  assertServes(config);
  const stores = await openStores(config, logger);
  const service = await startService(config, logger, stores);
  return { service, close: () => stopService(service, stores) };
}

/** The wings' live parts on a running instance. */
type Live = { log: VerifiableLog; projection?: PmaControlProjection; rules: EventRules; finder: Finder };

/** The wings' routes, in the order the OpenAPI document lists them; their live parts where the instance has them. */
function routeModules(live: Partial<Live> = {}): RouteModule[] {
  const rules = live.rules ? { ledger: live.rules.ledger, holder: live.rules.holder } : {};
  return [
    logRoutes(live.log),
    pmacontrolRoutes(live.projection),
    eventRulesRoutes(rules),
    approvalsRoutes(),
    changeSetsRoutes(),
    searchRoutes(live.finder),
  ];
}

/** The OpenAPI document this build serves (`GET /fr/api/openApi`, `pmacontrol-config openapi`). */
export const apiDocument = (version = packageVersion()): OpenAPIObject => buildOpenApi(version, routeModules());

/** The HTTP side of a running service: its handler, metrics, readiness and validators. */
function serveHttp(
  config: Config,
  logger: Logger,
  service: ConfigService,
  metrics: Metrics,
  live: Live & { validator: WriteValidator },
) {
  const readiness = new Readiness(config.readyMaxLagMs);
  const { validator } = live;
  const modules = routeModules(live);
  const handler = createHandler({
    modules,
    service,
    logger,
    openapi: buildOpenApi(packageVersion(), modules),
    access: config.access,
    metrics,
    readiness,
    validator,
    hosts: hostCheck(config.host, config.access.allowedHosts),
    keepAliveMs: config.http.feedKeepAliveMs,
  });
  return { readiness, handler };
}

/** What `close` stops, in order. */
interface Parts {
  readiness: Readiness;
  warming: { stop: () => void };
  listening: Listening;
  projection?: PmaControlProjection;
  rules: EventRules;
  service: ConfigService;
  stores: Stores;
}

/** Stops the service and closes its stores (the HTTP server, if any, closed first by the caller). */
async function stopService(service: ConfigService, stores: Stores): Promise<void> {
  await service.stop();
  await stores.store.close();
  stores.readModels.close();
  stores.lock.release();
}

/** Stops taking connections, lets in-flight requests finish, then stops the rest; once, whoever asks. */
function closer(logger: Logger, parts: Parts): () => Promise<void> {
  const { readiness, warming, listening, projection, rules, service, stores } = parts;
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= (async () => {
      readiness.stopping = true;
      warming.stop();
      await stopListening(listening, () => service.feed.closeAll());
      await projection?.stop();
      await rules.stop();
      await stopService(service, stores);
      logger.info('stopped');
    })());
}

/** The projection into PmaControl's tables, when configured (MariaDB's client, a quarter of a second, loaded only then). */
async function pmacontrolPart(
  config: Config,
  url: string | undefined,
  parts: { service: ConfigService; logger: Logger; validator: WriteValidator; metrics: Metrics },
): Promise<PmaControlProjection | undefined> {
  if (url === undefined) return undefined;
  const { MariadbPmaControlDatabase } = await import('./pmacontrol/mariadb-tables.js');
  const { service, logger, validator, metrics } = parts;
  const parse: ParseWrite = (resource, mode, body) => validator.parse(resource, mode, body).input;
  return pmacontrolProjection(config, {
    service,
    database: new MariadbPmaControlDatabase(url),
    logger,
    parse,
    gauge: (name, help, read) => metrics.gauge(name, help, read),
  });
}

/** Event rules: their ledger beside the log (the store's MariaDB database, else DATA_DIR); delivery starts once listening. */
async function eventRulesPart(
  config: Config,
  parts: { service: ConfigService; logger: Logger; metrics: Metrics; ownPort: () => number | undefined },
): Promise<EventRules> {
  let ledger: DeliveryLedger;
  if (config.eventStore === 'mariadb' && config.mariadb) {
    const { mariadbLedger } = await import('./event-rules/mariadb-ledger.js');
    ledger = mariadbLedger(config.mariadb);
  } else ledger = sqliteLedger(config.dataDir);
  const { metrics } = parts;
  return eventRules(config, {
    ...parts,
    ledger,
    gauge: (name, help, read) => metrics.gauge(name, help, read),
    counter: (name, help, labels) => metrics.counter(name, help, labels),
  });
}

const keySourceOf = (config: Config) => ({ fromEnv: config.logSigningKey, dataDir: config.dataDir });

/** The line a start ends with (tests and benches wait for it). */
function logListening(
  logger: Logger,
  config: Config,
  at: { port: number; service: ConfigService; stores: Stores; started: number },
) {
  const { port, service, stores, started } = at;
  const reached = { revision: service.revision, position: service.revision + 1 };
  const took = { started_in_ms: Math.round(performance.now() - started) };
  logger.info(
    { host: config.host, port, ...stores.store.describe(), data_dir: config.dataDir, ...reached, ...took },
    'listening',
  );
}

/**
 * Starts the service. `close` stops taking connections, lets in-flight requests finish, then closes
 * the stores; `shutdown` (SIGTERM) first answers /readyz 503 and goes on serving for `drainMs`, every
 * answer closing its connection, so that a load balancer stops sending and no request is reset.
 */
export async function start(config: Config, logger: Logger): Promise<Running> {
  const started = performance.now();
  assertMayServe(config);
  const validator = new WriteValidator(pmacontrolOpener(config));
  const pmacontrolDb = pmacontrolUrl(config);
  const opened = await openStores(config, logger);
  const metrics = new Metrics(packageVersion());
  const stores = { ...opened, store: metrics.measured(opened.store) };
  const service = await startService(config, logger, stores);
  const log = await startLog(service, (recorded) => openLogKey(keySourceOf(config), recorded));
  recordStore(config);
  metrics.watch(service);
  const projection = await pmacontrolPart(config, pmacontrolDb, { service, logger, validator, metrics });
  let port: number | undefined;
  const rules = await eventRulesPart(config, { service, logger, metrics, ownPort: () => port });
  const live = { log, projection, rules, validator, finder: finder(service, logger) };
  const { readiness, handler } = serveHttp(config, logger, service, metrics, live);
  if (projection) readiness.add(() => projection.notReady());
  let listening: Listening;
  try {
    listening = await listen(config.http, config.port, config.host, handler);
  } catch (error) {
    // Nothing may keep the process alive past a start that cannot listen (the MariaDB pool, the feed).
    await rules.stop();
    await stopService(service, stores);
    throw error;
  }
  const { server } = listening;
  // The write validators, compiled in the background once listening: not by a client's first write.
  const warming = validator.warm();
  projection?.start();
  port = (server.address() as AddressInfo).port;
  rules.start();
  logListening(logger, config, { port, service, stores, started });
  const close = closer(logger, { readiness, warming, listening, projection, rules, service, stores });
  const shutdown = async (drainMs = config.shutdownDrainMs) => {
    readiness.stopping = true;
    logger.info({ drain_ms: drainMs }, 'draining: not ready, still serving');
    await new Promise((resolve) => setTimeout(resolve, drainMs));
    await close();
  };
  return { server, port, service, close, shutdown };
}
