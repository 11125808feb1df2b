// Five years of a 10,000-server fleet: a log of BENCH_HISTORY_EVENTS events (default 10,000,000),
// reproducible from BENCH_SEED, then the questions people ask of it, each beside an anchor from the
// same run where one exists. The inventory (10,000 servers, 30,000 aliases, tags, clients,
// environments) is imported through the service; the history after it — PATCHes, password changes,
// soft deletes and restores, tag moves, secret reads, token events, spread over five years — is
// appended through the store's own append, as the service would have, then the read models are
// rebuilt (`replay`) and the service started on them.
// Then `replay` is run as users run it, timed whole (BENCH_HISTORY_COMMAND=0 leaves it out). Last,
// `replay` is killed with SIGKILL halfway and run again, which must resume and end equal to
// the one-run rebuild (BENCH_HISTORY_RESUME=0 leaves that out: it rebuilds the whole log again).
// Usage: npm run bench:history   (BENCH_HISTORY_EVENTS, BENCH_SEED, BENCH_HISTORY_DIR, BENCH_HISTORY_STORE,
// BENCH_HISTORY_COMMAND, BENCH_HISTORY_RESUME)
// BENCH_HISTORY_STORE=mariadb keeps the log on MariaDB (MARIADB_BENCH_URL, default
// mysql://root@127.0.0.1:3306/test: a database pmacontrol_history_<random> is made there and dropped).
// BENCH_HISTORY_DIR keeps the data directory (and its key) there; a second run on it asks the
// questions again without making the log again.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { pino } from 'pino';
import { rebuild } from '../src/application/replay.js';
import { createSecretBox } from '../src/application/secrets.js';
import { ConfigService } from '../src/application/service.js';
import type { ImportItem } from '../src/application/transfer.js';
import { loadConfig } from '../src/config.js';
import type { DomainEvent } from '../src/domain/shared/types.js';
import { CONFIG_STREAM } from '../src/domain/shared/types.js';
import { leafOf } from '../src/log/index.js';
import { openStores, readModelsFile } from '../src/main.js';
import { percentiles, replayProcess, rssMiB, type Served, scratchDir, serveProcess, timedGets } from './lib.js';

const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? 10_000_000);
const SERVERS = 10_000;
const ALIASES = 30_000;
const TAGS = 200;
const CLIENTS = 50;
const YEARS = 5;
const kept = process.env.BENCH_HISTORY_DIR;
const dataDir = kept ?? scratchDir('pmacontrol-history-');
const reused = kept !== undefined && existsSync(join(dataDir, 'bench.key'));
const KEY = reused ? readFileSync(join(dataDir, 'bench.key')) : randomBytes(32);
const onMariadb = process.env.BENCH_HISTORY_STORE === 'mariadb';
const mariadbBase = process.env.MARIADB_BENCH_URL ?? 'mysql://root@127.0.0.1:3306/test';
const database = `pmacontrol_history_${randomBytes(4).toString('hex')}`;
const mariadbUrl = Object.assign(new URL(mariadbBase), { pathname: `/${database}` }).toString();
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  CONFIG_SECRET_KEY: KEY.toString('hex'),
  LOG_LEVEL: 'silent',
  ...(onMariadb ? { EVENT_STORE: 'mariadb', MARIADB_URL: mariadbUrl } : {}),
};
if (onMariadb && kept) throw new Error('BENCH_HISTORY_DIR keeps a SQLite log only');
const ACTORS = ['ansible', 'terraform', 'alice', 'bob', 'nightly-sync', 'pmacontrol', 'platform'];
const DAY = 86_400_000;

/** A small deterministic generator (mulberry32): the same seed, the same log. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const next = random(Number(process.env.BENCH_SEED ?? 42));
const pick = (n: number) => 1 + Math.floor(next() * n);

function inventory(): ImportItem[] {
  const items: ImportItem[] = [];
  const add = (resource: ImportItem['resource'], id: number, input: Record<string, unknown>) =>
    items.push({ resource, index: items.length, id, input });
  for (let i = 1; i <= TAGS; i++) add('tags', i, { name: `tag-${i}`, color: '#FFFFFF', background: '#000000' });
  for (let i = 1; i <= CLIENTS; i++) add('clients', 100 + i, { libelle: `client-${i}`, logo: '', is_monitored: true });
  for (let i = 1; i <= SERVERS; i++) {
    add('servers', i, {
      id_client: 100 + pick(CLIENTS),
      id_environment: pick(6),
      name: `db-${i}`,
      display_name: `db-${i}`,
      ip: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
      port: 3306,
      login: 'pmacontrol',
      passwd: `pw-${i}`,
      tags: [pick(TAGS)],
    });
  }
  for (let i = 1; i <= ALIASES; i++)
    add('aliases', i, { id_mysql_server: pick(SERVERS), dns: `alias-${i}.db.example.net`, port: 3306 });
  return items;
}

async function importInventory(): Promise<void> {
  const stores = await openStores(loadConfig(env), pino({ level: 'silent' }));
  const service = new ConfigService({
    ...stores,
    leafOf,
    secretKey: () => KEY,
    clock: { now: () => new Date(Date.now() - YEARS * 365 * DAY) },
  });
  await service.start();
  await service.write.importEntries(
    inventory(),
    { actor: 'import', requestId: 'inventory' },
    { dryRun: false, secretsRight: true },
  );
  await service.stop();
  await stores.store.close();
  stores.readModels.close();
  stores.lock.release();
}

/** One step of five years of work on the fleet; `deleted` follows soft deletes and restores. */
function step(i: number, deleted: Set<number>, seal: (plain: string) => string): DomainEvent {
  const roll = next();
  const id = pick(SERVERS);
  if (roll < 0.5)
    return { type: 'ServerUpdated', data: { id, changes: { port: 3306 + (i % 50), hostname: `host-${i % 997}` } } };
  if (roll < 0.6) return { type: 'ServerUpdated', data: { id, changes: { passwd: seal(`pw-${i}`) } } };
  if (roll < 0.7)
    return { type: 'ServerUpdated', data: { id, changes: { tags: [pick(TAGS), pick(TAGS)].sort((a, b) => a - b) } } };
  if (roll < 0.8) return { type: 'SecretRevealed', data: { resource: 'servers', id, field: 'passwd' } };
  if (roll < 0.9) return { type: 'AliasUpdated', data: { id: pick(ALIASES), changes: { port: 3306 + (i % 7) } } };
  if (roll < 0.93) {
    if (deleted.delete(id)) return { type: 'ServerRestored', data: { id } };
    deleted.add(id);
    return { type: 'ServerDeleted', data: { id } };
  }
  if (roll < 0.999)
    return {
      type: 'TagUpdated',
      data: { id: pick(TAGS), changes: { background: `#${(i % 0xffffff).toString(16).padStart(6, '0')}` } },
    };
  return { type: 'ClientUpdated', data: { id: 100 + pick(CLIENTS), changes: { logo: `logo-${i}.png` } } };
}

/** The history after the inventory, appended 5,000 events at a time, its times spread over five years. */
async function appendHistory(): Promise<{ seconds: number; events: number }> {
  const stores = await openStores(loadConfig(env), pino({ level: 'silent' }));
  const box = createSecretBox(KEY);
  const seal = (plain: string) => box.seal(plain);
  let revision = await stores.store.head(CONFIG_STREAM);
  const total = EVENTS - revision - 1;
  const start = Date.now() - YEARS * 365 * DAY;
  const started = performance.now();
  const deleted = new Set<number>();
  for (let done = 0; done < total; ) {
    const count = Math.min(5000, total - done);
    const records = Array.from({ length: count }, (_, k) => {
      const i = done + k;
      const at = new Date(start + Math.floor((i / total) * YEARS * 365 * DAY)).toISOString();
      const metadata = { actor: ACTORS[i % ACTORS.length], request_id: `h-${i >> 1}`, at, schema: 2 };
      return { ...step(i, deleted, seal), metadata };
    });
    revision = (await stores.store.append(CONFIG_STREAM, records, revision)).nextRevision;
    done += count;
    if (done % 1_000_000 < count) process.stderr.write(`appended ${revision + 1} events\n`);
  }
  const seconds = (performance.now() - started) / 1000;
  await stores.store.close();
  stores.readModels.close();
  stores.lock.release();
  return { seconds, events: revision + 1 };
}

/** `replay`: the read models rebuilt from the log into a fresh file; events per second. */
async function rebuilt(): Promise<number> {
  const stores = await openStores(loadConfig(env), pino({ level: 'silent' }), 'alone');
  const target = stores.rebuild.open();
  const started = performance.now();
  const events = await rebuild(stores.store, target, leafOf, (position) => {
    if (position % 1_000_000 === 0) process.stderr.write(`rebuilt ${position} events\n`);
  });
  const seconds = (performance.now() - started) / 1000;
  await stores.synced;
  await stores.store.close();
  stores.readModels.close();
  target.close();
  stores.lock.release();
  stores.rebuild.adopt();
  return events / seconds;
}

/** The rebuild's anchor: the whole log read through the store alone, as a rebuild reads it; events per second. */
async function readAlone(): Promise<{ rate: number; events: number }> {
  const stores = await openStores(loadConfig(env), pino({ level: 'silent' }));
  const started = performance.now();
  let read = 0;
  for (;;) {
    const events = await stores.store.readStream(CONFIG_STREAM, { fromRevision: read, maxCount: 5000 });
    read += events.length;
    if (events.length < 5000) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await stores.synced;
  await stores.store.close();
  stores.readModels.close();
  stores.lock.release();
  return { rate: read / seconds, events: read };
}

const serve = () => serveProcess(env, ['dist/src/cli.js']);

/**
 * The rebuild killed with SIGKILL halfway, then run again: where the second `replay` resumed, the
 * pace of what it folded after that, and whether it found the read models it made equal row for
 * row to the stored ones (those of the one-run rebuild).
 */
async function resumedAfterKill(events: number): Promise<void> {
  const killed = await replayProcess(env, events / 2);
  const again = await replayProcess(env);
  const { resumed, reached } = again;
  const name = `replay killed (kill -9) at ${killed.reached.events}, again`;
  if (!resumed) {
    row(name, 'started over', 'resumed');
    return;
  }
  const rate = (reached.events - resumed.events) / ((reached.ms - resumed.ms) / 1000);
  row(name, `resumed at ${resumed.events}, then ${rate.toFixed(0)} events/s`, 'resumed');
  const equal = again.code === 0 && again.stdout.includes('read models match the log');
  row('the resumed rebuild beside the one-run one', equal ? 'equal, row for row' : 'DIFFERENT', 'equal');
}

/** `replay` as users run it, whole (its start, the rebuild, the comparison), beside the log read alone. */
async function replayWhole(events: number, anchor: number): Promise<void> {
  const started = performance.now();
  const run = await replayProcess(env);
  const rate = events / ((performance.now() - started) / 1000);
  const matched = run.code === 0 && run.stdout.includes('read models match the log');
  const said = `${rate.toFixed(0)} events/s (${(rate / anchor).toFixed(2)}× the log read alone)`;
  row('`replay`, the command, whole', matched ? said : `exit ${run.code}: ${run.stdout.trim()}`, '');
}

async function timed(url: string, count: number, path: (i: number) => string): Promise<{ p50: number; p99: number }> {
  return percentiles(await timedGets(url, count, path));
}

/** A year of changes as CSV, streamed: the seconds, the bytes, and the service's peak RSS meanwhile. */
async function yearAsCsv(served: Served): Promise<{ seconds: number; mib: number; peakMiB: number }> {
  const since = new Date(Date.now() - 365 * DAY).toISOString();
  const started = performance.now();
  let peak = rssMiB(served.pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMiB(served.pid));
  }, 200);
  const response = await fetch(`${served.url}/fr/api/changes?since=${since}`, { headers: { Accept: 'text/csv' } });
  let bytes = 0;
  for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
  clearInterval(timer);
  return { seconds: (performance.now() - started) / 1000, mib: bytes / 2 ** 20, peakMiB: peak };
}

const row = (name: string, value: string, goal: string) =>
  console.log(`${name.padEnd(44)} ${value.padEnd(40)} ${goal}`);
const ms = ({ p50, p99 }: { p50: number; p99: number }) => `p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms`;

async function questions(served: Served): Promise<void> {
  const now = Date.now();
  const at = (i: number) => new Date(now - YEARS * 365 * DAY + ((i * 7919) % (YEARS * 365)) * DAY).toISOString();
  // One history asked first, not timed: the first after a start compiles the path (80–110 ms).
  await (await fetch(`${served.url}/fr/api/config/servers/${SERVERS}/history`)).arrayBuffer();
  const history = await timed(served.url, 100, (i) => `/fr/api/config/servers/${1 + ((i * 487) % SERVERS)}/history`);
  const one = (await (await fetch(`${served.url}/fr/api/config/servers/1/history`)).json()) as { items: unknown[] };
  row(`one server's history (${one.items.length} changes)`, ms(history), 'p99 ≤ 50 ms');
  const hour = new Date(now - 3_600_000).toISOString();
  row(
    'changes?since= the last hour',
    ms(await timed(served.url, 20, () => `/fr/api/changes?since=${hour}`)),
    'p99 ≤ 100 ms',
  );
  const year = (i: number) => `since=${new Date(now - 365 * DAY).toISOString()}&actor=${ACTORS[i % ACTORS.length]}`;
  row(
    'changes of one actor over a year, page 1',
    ms(await timed(served.url, 20, (i) => `/fr/api/changes?${year(i)}&limit=100`)),
    'p99 ≤ 100 ms',
  );
  row(
    '10,000 servers ?at= a moment',
    ms(await timed(served.url, 10, (i) => `/fr/api/config/servers?at=${at(i)}`)),
    'p99 ≤ 1 s',
  );
  const month = (i: number) => `from=${at(i)}&to=${new Date(Date.parse(at(i)) + 30 * DAY).toISOString()}`;
  row('diff?from=&to= across a month', ms(await timed(served.url, 5, (i) => `/fr/api/diff?${month(i)}`)), 'p99 ≤ 2 s');
  const csv = await yearAsCsv(served);
  row(
    'a year of changes as CSV, streamed',
    `${csv.seconds.toFixed(1)} s, ${csv.mib.toFixed(0)} MiB, peak RSS ${csv.peakMiB.toFixed(0)} MiB`,
    '≤ 90 s, memory flat',
  );
  const exported = await timed(served.url, 1, () => `/fr/api/export?at=${at(3)}`);
  row('export?at=', `${(exported.p50 / 1000).toFixed(1)} s`, '≤ 10 s');
}

/** The event log's bytes: the SQLite file, or the MariaDB table's data and indexes. */
async function logSize(): Promise<number> {
  if (!onMariadb) return statSync(join(dataDir, 'events.sqlite')).size;
  const admin = await createConnection({ uri: mariadbBase });
  try {
    await admin.query(`ANALYZE TABLE ${database}.pmacontrol_events`);
    const [rows] = (await admin.query(
      'SELECT data_length + index_length AS bytes FROM information_schema.tables WHERE table_schema = ? AND table_name = ?',
      [database, 'pmacontrol_events'],
    )) as unknown as [{ bytes: number }[]];
    return Number(rows[0].bytes);
  } finally {
    await admin.end();
  }
}

async function onDatabase(work: () => Promise<void>): Promise<void> {
  if (!onMariadb) return work();
  const admin = await createConnection({ uri: mariadbBase });
  await admin.query(`CREATE DATABASE ${database}`);
  try {
    await work();
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database}`);
    await admin.end();
  }
}

async function main() {
  console.log(
    `a history of ${EVENTS} events over ${YEARS} years, ${SERVERS} servers, ${ALIASES} aliases, ` +
      `on ${onMariadb ? `MariaDB (${database})` : 'SQLite'}, in ${dataDir}`,
  );
  let rate = Number.NaN;
  if (!reused) {
    if (kept) mkdirSync(dataDir, { recursive: true });
    await importInventory();
    const appended = await appendHistory();
    console.log(`appended through the store: ${appended.events} events in ${appended.seconds.toFixed(0)} s`);
    rate = await rebuilt();
    console.log(`rebuilt at ${rate.toFixed(0)} events/s`);
    if (kept) writeFileSync(join(dataDir, 'bench.key'), KEY, { mode: 0o600 });
  }
  const alone = await readAlone();
  const logBytes = await logSize();
  const modelBytes = statSync(readModelsFile(loadConfig(env))).size;
  const served = await serve();
  try {
    row(
      'start-up with stored read models',
      `${(served.startMs / 1000).toFixed(1)} s, RSS ${rssMiB(served.pid).toFixed(0)} MiB`,
      '≤ 2 s, ≤ 600 MB',
    );
    await questions(served);
    if (!reused) row('a full rebuild (replay)', `${rate.toFixed(0)} events/s`, '≥ 150,000 events/s');
    row('anchor: the log read through the store alone', `${alone.rate.toFixed(0)} events/s`, '');
    row(
      'read-model files / the event log',
      `${(modelBytes / logBytes).toFixed(2)}× (${(logBytes / 2 ** 30).toFixed(1)} GiB log)`,
      '≤ 1.5×',
    );
  } finally {
    await served.stop();
  }
  if (process.env.BENCH_HISTORY_COMMAND !== '0') await replayWhole(alone.events, alone.rate);
  if (process.env.BENCH_HISTORY_RESUME !== '0') await resumedAfterKill(alone.events);
}

await onDatabase(main);
