import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { assertMatches } from '../../src/application/secret-key.js';
import { type Clock, ConfigService } from '../../src/application/service.js';
import { approvals, approvalsRoutes } from '../../src/approvals/index.js';
import { approvedMerge, changeSets, changeSetsRoutes } from '../../src/change-sets/index.js';
import type { AccessSettings } from '../../src/config.js';
import type { SignerKey } from '../../src/engine/signed-note.js';
import { eventRulesRoutes } from '../../src/event-rules/index.js';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import type { EventStore } from '../../src/event-store/port.js';
import { createHandler } from '../../src/http/app.js';
import type { Readiness } from '../../src/http/operations.js';
import { leafOf, logRoutes, startLog, type VerifiableLog } from '../../src/log/index.js';
import { buildOpenApi } from '../../src/openapi/build.js';
import { type PmaControlProjection, pmacontrolRoutes } from '../../src/pmacontrol/index.js';
import type { ReadModelStore } from '../../src/read-models/port.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import { finder, searchRoutes } from '../../src/search/index.js';
import { Conformance } from './conformance.js';

export const BASE = '/fr/api/config';
const conformance = new Conformance();

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, without JSON encoding. */
  raw?: string;
  headers?: Record<string, string>;
}

export interface TestClock extends Clock {
  /** Moves time forward, as if that long had passed. */
  advance(ms: number): void;
}

/** A fixed clock that moves one second each time it is read: timestamps in tests are predictable. */
export function testClock(start = Date.parse('2026-01-01T00:00:00.000Z')): TestClock {
  let now = start;
  return {
    now: () => {
      now += 1000;
      return new Date(now);
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

export interface Harness {
  url: string;
  service: ConfigService;
  /** The verifiable log, when started with a log key. */
  log?: VerifiableLog;
  store: EventStore;
  readModels: ReadModelStore;
  logs: string[];
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** How often the live feed sends a comment while nothing happens. */
  keepAliveMs?: number;
  store?: EventStore;
  readModels?: ReadModelStore;
  secretKey?: Buffer;
  clock?: Clock;
  /** Who may do what without a token, and CORS; default: anonymous writer, no CORS. */
  access?: AccessSettings;
  /** Whether the instance is stopping, as /readyz sees it. */
  readiness?: Readiness;
  /** Opens PmaControl ciphertexts, as PMACONTROL_CRYPT_KEY_FILE does for the real service. */
  openCrypted?: (ciphertext: string) => string;
  /** Signs the log's checkpoints, as the real service does (LogKeyRecorded comes after the genesis). */
  logKey?: SignerKey;
  /** Makes the projection into PmaControl's tables, as PMACONTROL_DB_URL does for the real service. */
  pmacontrol?: (service: ConfigService, logger: Logger) => PmaControlProjection;
}

/** A logger whose lines land in `logs`. */
export const collectingLogger = (logs: string[]): Logger =>
  pino(
    { level: 'info' },
    new Writable({
      write: (chunk, _enc, done) => {
        logs.push(String(chunk));
        done();
      },
    }),
  );

async function startService(store: EventStore, readModels: ReadModelStore, key: Buffer, clock: Clock, logs: string[]) {
  const service = new ConfigService({
    store,
    readModels,
    leafOf,
    secretKey: (recorded) => {
      if (recorded) assertMatches(key, 'the test key', recorded);
      return key;
    },
    clock,
    onBackgroundError: (error) => logs.push(`background error: ${error.message}`),
  });
  await service.start();
  changeSets(service);
  approvals(service, { 'change-set-merge': approvedMerge(service) });
  return service;
}

/** The wings the options ask for, plugged in as main.ts plugs them, and the handler that serves them. */
async function served(service: ConfigService, logger: Logger, options: HarnessOptions) {
  const logKey = options.logKey;
  const log = logKey ? await startLog(service, () => logKey) : undefined;
  const pmacontrol = options.pmacontrol?.(service, logger);
  pmacontrol?.start();
  const modules = [
    logRoutes(log),
    pmacontrolRoutes(pmacontrol),
    eventRulesRoutes(),
    approvalsRoutes(),
    changeSetsRoutes(),
    // Made at the first search: its reading of the past would race the tests of a damaged change log.
    searchRoutes(() => finder(service)),
  ];
  const handler = createHandler({
    modules,
    service,
    logger,
    openapi: buildOpenApi('test', modules),
    keepAliveMs: options.keepAliveMs,
    access: options.access,
    readiness: options.readiness,
    openCrypted: options.openCrypted,
  });
  return { log, pmacontrol, handler };
}

/** The service on the in-memory store (unless given another), served as the service serves it (`createHandler`) on 127.0.0.1, port 0. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const store = options.store ?? new InMemoryEventStore();
  const readModels = options.readModels ?? new SqliteReadModelStore(':memory:');
  const key = options.secretKey ?? randomBytes(32);
  const service = await startService(store, readModels, key, options.clock ?? testClock(), logs);
  const { log, pmacontrol, handler } = await served(service, logger, options);
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    service,
    ...(log ? { log } : {}),
    store,
    // As queries see them: what the projector holds back is handed over first.
    get readModels() {
      service.projector.flush();
      return readModels;
    },
    logs,
    request: (method, path, opts = {}) => send(url, method, path, opts),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      service.feed.closeAll();
      server.closeIdleConnections();
      await closed;
      await pmacontrol?.stop();
      await service.stop();
      await store.close();
      readModels.close();
    },
  };
}

export async function send(url: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url + path, { method, headers, body }).catch((error: Error) => {
    // undici says only "fetch failed": the cause (a reset, a refusal) is what tells why.
    const cause = error.cause as (Error & { code?: string }) | undefined;
    throw new Error(`${method} ${path}: ${error.message}${cause ? ` (${cause.code ?? ''} ${cause.message})` : ''}`, {
      cause,
    });
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  const parsed = text && /^application\/(problem\+)?json/.test(contentType ?? '') ? JSON.parse(text) : undefined;
  const problems = conformance.check(method, path, response.status, contentType, parsed);
  if (problems.length > 0)
    throw new Error(`response does not match the OpenAPI document:\n${problems.join('\n')}\n${text.slice(0, 500)}`);
  return { status: response.status, headers: response.headers, body: parsed, text };
}
