// Over 300 lines: the composition root: configuration, stores, service, HTTP server and their start and stop, in order.

import {
  closeSync,
  existsSync,
  fsync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { type Logger, pino } from 'pino';
import type { ParseWrite } from './application/batch.js';
import { openLogKey } from './application/log-key.js';
import { createPmaControlCrypt, readPmaControlCryptKey } from './application/pmacontrol-crypt.js';
import { PmaControlProjection } from './application/pmacontrol-projection.js';
import { openRetiredKeys, openSecretKey } from './application/secret-key.js';
import { ConfigService } from './application/service.js';
import { StartRefused } from './application/start-refused.js';
import type { Config, HttpLimits } from './config.js';
import { assertServes, InstanceLock, recordStore } from './data-dir.js';
import type { EventStore } from './event-store/port.js';
import { SqliteEventStore } from './event-store/sqlite/store.js';
import { createHandler } from './http/app.js';
import { type GuardedConnections, guardConnections } from './http/connections.js';
import { hostCheck } from './http/hosts.js';
import { Metrics, Readiness } from './http/operations.js';
import { buildOpenApi } from './openapi/build.js';
import { PmaControlDatabase } from './read-models/pmacontrol/database.js';
import type { ReadModelStore } from './read-models/port.js';
import { REBUILT, REBUILT_WAITING, SqliteReadModelStore } from './read-models/sqlite/store.js';
import { WriteValidator } from './schemas/validator.js';

export interface Stores {
  store: EventStore;
  readModels: ReadModelStore;
  /** This process's hold on DATA_DIR (see InstanceLock), released by `close`. */
  lock: InstanceLock;
  /** DATA_DIR's probe file synced: awaited once the read models are loaded (see prepareDataDir). */
  synced: Promise<void>;
  /**
   * Where a rebuild of the read models goes (`replay`), and how it replaces them (`--apply`): in
   * their place (no instance running), or beside them for the serving instance to take in (`offer`).
   * `open` gives the file a rebuild that stopped before its end left, if any (see runReplay).
   */
  rebuild: { open(): ReadModelStore; adopt(): void; offer(): void; discard(): void };
}

/**
 * Makes sure DATA_DIR is a directory this process can write and sync a file in, creating it if
 * needed; refuses at once with a message that names it otherwise. (Node's recursive mkdir loops
 * forever under /proc, so each missing level is made on its own.) The sync is what the returned
 * promise waits for, refused alike when it fails: it waits for whatever the file system has to write
 * before it, so it runs while the read models load rather than before (bench/http.ts, start-up).
 */
export function prepareDataDir(dir: string): Promise<void> {
  const path = resolve(dir);
  const refuse = (why: string) => new StartRefused(`DATA_DIR ${path} cannot hold the data: ${why}`);
  const missing: string[] = [];
  for (let at = path; !existsSync(at); at = dirname(at)) missing.unshift(at);
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      throw refuse(`creating ${level} failed (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  if (!statSync(path).isDirectory()) throw refuse('it is not a directory');
  const probe = join(path, `.write-probe-${process.pid}`);
  const failed = (error: unknown) => refuse(`writing a file there failed (${(error as NodeJS.ErrnoException).code})`);
  /** Closes (when open) and removes the probe; the first error of the two, if any. */
  const removeProbe = (descriptor?: number): NodeJS.ErrnoException | undefined => {
    try {
      if (descriptor !== undefined) closeSync(descriptor);
      unlinkSync(probe);
    } catch (error) {
      return error as NodeJS.ErrnoException;
    }
  };
  let fd: number | undefined;
  try {
    fd = openSync(probe, 'w');
    writeSync(fd, 'probe');
  } catch (error) {
    if (fd !== undefined) removeProbe(fd);
    throw failed(error);
  }
  const opened = fd;
  const synced = new Promise<void>((resolve, reject) =>
    fsync(opened, (error) => {
      const cleanup = removeProbe(opened);
      const failure = error ?? cleanup;
      if (failure) reject(failed(failure));
      else resolve();
    }),
  );
  // Awaited later: a start that fails first does not also report this as unhandled.
  synced.catch(() => {});
  return synced;
}

/**
 * The composition root: picks the adapters for the configuration (copy-log opens its target alike).
 * `hold`: how this process holds DATA_DIR (shared by instances and commands, alone by replay --apply).
 */
/** The file of this DATA_DIR's read models for the configured store (one per store kind). */
export const readModelsFile = (config: Config): string =>
  join(
    config.dataDir,
    config.eventStore === 'sqlite' ? 'read-models.sqlite' : `read-models-${config.eventStore}.sqlite`,
  );

export async function openStores(config: Config, logger: Logger, hold: 'shared' | 'alone' = 'shared'): Promise<Stores> {
  const synced = prepareDataDir(config.dataDir);
  let lock: InstanceLock;
  try {
    lock = hold === 'alone' ? InstanceLock.exclusive(config.dataDir) : InstanceLock.shared(config.dataDir);
  } catch (error) {
    await synced.catch(() => {});
    throw error;
  }
  const file = readModelsFile(config);
  const setAside = (setAsideAs: string, reason: string) =>
    logger.warn(
      { file, set_aside_as: setAsideAs, reason },
      'read models corrupt or unreadable: set aside, rebuilding them from the log',
    );
  const fresh = `${file}.rebuild`;
  let store: EventStore;
  let readModels: ReadModelStore;
  try {
    store = await openEventStore(config);
    readModels = new SqliteReadModelStore(file, setAside);
  } catch (error) {
    lock.release();
    await synced.catch(() => {}); // the probe file is removed before the error ends the process
    throw error;
  }
  return {
    store,
    readModels,
    lock,
    synced,
    rebuild: {
      // A rebuild's file that cannot be read is of no use: removed, and a new one made.
      open: () => new SqliteReadModelStore(fresh, (setAsideAs) => SqliteReadModelStore.remove(setAsideAs), true),
      adopt: () => SqliteReadModelStore.move(fresh, file),
      offer: () => SqliteReadModelStore.move(fresh, file + REBUILT),
      discard: () => SqliteReadModelStore.remove(fresh),
    },
  };
}

/**
 * The configured event store. The EventStoreDB and MariaDB adapters (and their clients, a quarter of
 * a second to load) are imported only when configured: the embedded store starts without them.
 */
export async function openEventStore(config: Config): Promise<EventStore> {
  if (config.eventStore === 'eventstoredb') {
    const { EsdbEventStore } = await import('./event-store/esdb/store.js');
    return new EsdbEventStore(config.eventStoreConnectionString!);
  }
  if (config.eventStore === 'mariadb') {
    const { MariadbEventStore } = await import('./event-store/mariadb/store.js');
    const { pollMaxMs, ...settings } = config.mariadb!;
    return new MariadbEventStore({ ...settings, poll: { minMs: 20, maxMs: pollMaxMs } });
  }
  return new SqliteEventStore(join(config.dataDir, 'events.sqlite'), { pollMs: config.pollMs });
}

/** Logs the start-up catch-up: its first batch, then every 10,000 events. */
function progressLog(logger: Logger): (position: number) => void {
  let logged = -Infinity;
  return (position) => {
    if (position - logged < 10_000) return;
    logged = position;
    logger.info({ position }, 'projecting the log');
  };
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

/**
 * Node's own guards against slow clients, with shorter defaults than Node's (60 s for headers, 5 min
 * for a request), checked every second rather than every 30 s.
 */
function serverOptions(limits: HttpLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
  };
}

export interface Running {
  server: Server;
  port: number;
  service: ConfigService;
  close(): Promise<void>;
  /** A graceful stop: not ready at once, serving for `drainMs` (SHUTDOWN_DRAIN_MS), then `close`. */
  shutdown(drainMs?: number): Promise<void>;
}

/** Opens the stores and brings the service to the head of the log; the stores are closed if that fails. */
async function startService(
  config: Config,
  logger: Logger,
  stores: Stores,
  signs: 'signs' | 'signs not' = 'signs not',
): Promise<ConfigService> {
  const { store, readModels } = stores;
  const service = new ConfigService({
    store,
    readModels,
    ...(signs === 'signs'
      ? { logKey: (recorded) => openLogKey({ fromEnv: config.logSigningKey, dataDir: config.dataDir }, recorded) }
      : {}),
    secretKey: (recorded) => openSecretKey({ fromEnv: config.secretKey, dataDir: config.dataDir }, recorded),
    retiredKeys: () => openRetiredKeys({ retiredFromEnv: config.retiredSecretKeys, dataDir: config.dataDir }),
    clock: { now: () => new Date() },
    onProgress: progressLog(logger),
    onBackgroundError: (error) =>
      logger.error({ err: { name: error.name, message: error.message } }, 'projection error'),
    feed: { maxSubscribers: config.http.maxSubscribers, maxBufferedBytes: config.http.feedMaxBufferBytes },
    onRepair: (event) => {
      if (event.step === 'started' && event.reason === REBUILT_WAITING)
        logger.info(
          { file: readModels.location },
          'a rebuild of the read models (replay --apply) taken in: catching it up with the log (not ready meanwhile)',
        );
      else if (event.step === 'started') {
        const { reason, setAsideAs } = event;
        logger.warn(
          { file: readModels.location, set_aside_as: setAsideAs, reason },
          'read models damaged: set aside, rebuilding them from the log (not ready meanwhile)',
        );
      } else logger.info({ events: event.events, ms: event.ms }, 'read models rebuilt from the log');
    },
  });
  try {
    await service.start();
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
  return {
    service,
    async close() {
      await service.stop();
      await stores.store.close();
      stores.readModels.close();
      stores.lock.release();
    },
  };
}

async function listen(
  config: Config,
  callback: RequestListener,
): Promise<{ server: Server; connections: GuardedConnections }> {
  const server = createServer(serverOptions(config.http), callback);
  const connections = guardConnections(server, config.http);
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return { server, connections };
}

type Opener = (ciphertext: string) => string;

/** PMACONTROL_CRYPT_KEY_FILE: read at start, so that a wrong path stops the start rather than a write. */
function pmacontrolOpener(config: Config): Opener | undefined {
  if (!config.pmacontrolCryptKeyFile) return undefined;
  try {
    const crypt = createPmaControlCrypt(readPmaControlCryptKey(config.pmacontrolCryptKeyFile));
    return (ciphertext) => crypt.decrypt(ciphertext);
  } catch (error) {
    throw new StartRefused(
      `PMACONTROL_CRYPT_KEY_FILE ${config.pmacontrolCryptKeyFile} cannot be used: ${(error as Error).message}`,
    );
  }
}

/**
 * The projection into PmaControl's tables (PMACONTROL_DB_URL), started once the service serves; it
 * needs PmaControl's key to write its ciphertexts, checked here so that a start without it is refused.
 */
function pmacontrolProjection(
  config: Config,
  logger: Logger,
  service: ConfigService,
): PmaControlProjection | undefined {
  if (!config.pmacontrol) return undefined;
  if (!/^(mysql|mariadb):\/\/[^/]+\/[^/?#]+/.test(config.pmacontrol.url)) {
    throw new StartRefused('PMACONTROL_DB_URL must be mysql://user:password@host:port/database');
  }
  if (!config.pmacontrolCryptKeyFile) {
    throw new StartRefused(
      "PMACONTROL_DB_URL needs PMACONTROL_CRYPT_KEY_FILE: passwords are written into PmaControl's tables as its ciphertexts",
    );
  }
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(config.pmacontrolCryptKeyFile));
  const database = new PmaControlDatabase(config.pmacontrol.url.replace(/^mariadb:/, 'mysql:'));
  const child = logger.child({ component: 'pmacontrol' });
  const validator = new WriteValidator();
  const parse: ParseWrite = (resource, mode, body) => validator.parse(resource, mode, body).input as typeof body;
  const { leaseMs, driftMs } = config.pmacontrol;
  return new PmaControlProjection({ service, database, crypt, logger: child, leaseMs, driftMs, parse });
}

/** The HTTP side of a running service: its handler, metrics, readiness and validators. */
function serveHttp(
  config: Config,
  logger: Logger,
  service: ConfigService,
  metrics: Metrics,
  openPmaControl?: Opener,
  pmacontrol?: PmaControlProjection,
) {
  const readiness = new Readiness(config.readyMaxLagMs);
  const validator = new WriteValidator(openPmaControl);
  const handler = createHandler({
    pmacontrol,
    service,
    logger,
    openapi: buildOpenApi(packageVersion()),
    access: config.access,
    metrics,
    readiness,
    validator,
    hosts: hostCheck(config.host, config.access.allowedHosts),
    keepAliveMs: config.http.feedKeepAliveMs,
  });
  return { readiness, validator, handler };
}

/** What `close` stops, in order. */
interface Parts {
  readiness: Readiness;
  warming: { stop: () => void };
  server: Server;
  connections: GuardedConnections;
  projection?: PmaControlProjection;
  service: ConfigService;
  stores: Stores;
}

/** Stops taking connections, lets in-flight requests finish, then stops the rest; once, whoever asks. */
function closer(logger: Logger, parts: Parts): () => Promise<void> {
  const { readiness, warming, server, connections, projection, service, stores } = parts;
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= (async () => {
      readiness.stopping = true;
      warming.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      service.feed.closeAll(); // live feeds would hold their connections open
      server.closeIdleConnections();
      connections.closeIdle(); // and those that never sent a request (Node's own list leaves them)
      await closed;
      await projection?.stop();
      await service.stop();
      await stores.store.close();
      stores.readModels.close();
      stores.lock.release();
      logger.info('stopped');
    })());
}

/**
 * Starts the service. `close` stops taking connections, lets in-flight requests finish, then closes
 * the stores; `shutdown` (SIGTERM) first answers /readyz 503 and goes on serving for `drainMs`, every
 * answer closing its connection, so that a load balancer stops sending and no request is reset.
 */
export async function start(config: Config, logger: Logger): Promise<Running> {
  const started = performance.now();
  const openPmaControl = pmacontrolOpener(config);
  const opened = await openStores(config, logger);
  const metrics = new Metrics(packageVersion());
  const stores = { ...opened, store: metrics.measured(opened.store) };
  const service = await startService(config, logger, stores, 'signs');
  recordStore(config);
  metrics.watch(service);
  const projection = pmacontrolProjection(config, logger, service);
  if (projection) metrics.watchPmaControl(() => projection.status());
  const { readiness, validator, handler } = serveHttp(config, logger, service, metrics, openPmaControl, projection);
  const { server, connections } = await listen(config, handler);
  // The write validators, compiled in the background once listening: not by a client's first write.
  const warming = validator.warm();
  projection?.start();
  const port = (server.address() as AddressInfo).port;
  const reached = { revision: service.revision, position: service.revision + 1 };
  const took = { started_in_ms: Math.round(performance.now() - started) };
  logger.info(
    { host: config.host, port, ...stores.store.describe(), data_dir: config.dataDir, ...reached, ...took },
    'listening',
  );
  const close = closer(logger, { readiness, warming, server, connections, projection, service, stores });
  const shutdown = async (drainMs = config.shutdownDrainMs) => {
    readiness.stopping = true;
    logger.info({ drain_ms: drainMs }, 'draining: not ready, still serving');
    await new Promise((resolve) => setTimeout(resolve, drainMs));
    await close();
  };
  return { server, port, service, close, shutdown };
}
