// A large log for the benches that read history (bench/changes.ts, bench/console.ts): generated
// through the service's own write path into a data directory of its own, then served by the
// service in its own process, as users run it.

import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type { WriteRequest } from '../src/application/prepare.js';
import { ConfigService } from '../src/application/service.js';
import { loadConfig } from '../src/config.js';
import { leafOf } from '../src/log/index.js';
import { openStores } from '../src/main.js';
import { type Served, scratchDir, serveProcess } from './lib.js';

export const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
export const SERVERS = Number(process.env.BENCH_SERVERS ?? 10_000);
const KEY = randomBytes(32).toString('hex');
export const dataDir = scratchDir('pmacontrol-audit-');
const env = { DATA_DIR: dataDir, CONFIG_SECRET_KEY: KEY, LOG_LEVEL: 'silent' };
export const ACTORS = ['ansible', 'terraform', 'alice', 'bob', 'nightly-sync'];

type Run = (i: number, request: WriteRequest) => Promise<void>;

/** Tags, then servers carrying them, then updates spread over the servers until the log is long enough. */
async function fill(service: ConfigService, run: Run): Promise<void> {
  for (let i = 1; i <= 20; i++) {
    await run(i, {
      kind: 'create',
      resource: 'tags',
      input: { name: `tag-${i}`, color: '#000000', background: '#FFFFFF' },
    });
  }
  for (let i = 1; i <= SERVERS; i++) {
    const ip = `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
    const input = {
      id_client: 99,
      id_environment: 1 + (i % 6),
      name: `db-${i}`,
      ip,
      login: 'pma',
      passwd: `pw-${i}`,
      tags: [1 + (i % 20)],
    };
    await run(i, { kind: 'create', resource: 'servers', input });
  }
  for (let i = 0; service.revision + 1 < EVENTS; i++) {
    const id = 1 + ((i * 7919) % SERVERS);
    const input =
      i % 10 === 0
        ? { tags: [1 + (i % 20), 1 + ((i + 3) % 20)] }
        : { port: 3306 + (i % 1000), hostname: `host-${i % 97}` };
    await run(i, { kind: 'patch', resource: 'servers', id, input });
    if (i % 100_000 === 0) process.stderr.write(`generated ${service.revision + 1} events\n`);
  }
}

/** Fills a log through the service's own write path (group commit), many commands in flight. */
export async function generate(): Promise<{ seconds: number; events: number }> {
  const config = loadConfig(env);
  const stores = await openStores(config, pino({ level: 'silent' }));
  const service = new ConfigService({
    ...stores,
    leafOf,
    secretKey: () => Buffer.from(KEY, 'hex'),
    clock: { now: () => new Date() },
  });
  await service.start();
  const started = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  const run: Run = async (i, request) => {
    const job = service.write.execute(request, { actor: ACTORS[i % ACTORS.length], requestId: `req-${i}` });
    const tracked = job.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= 512) await Promise.race(inFlight);
  };
  await fill(service, run);
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  const events = service.revision + 1;
  await service.stop();
  await stores.store.close();
  stores.readModels.close();
  return { seconds, events };
}

/** The service on the large log, in its own process, as users run it. */
export const serve = (): Promise<Served> => serveProcess(env, ['--import', 'tsx', 'src/cli.ts']);
