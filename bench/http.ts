// The service against the framework floor, in the same run, under the same load (autocannon, 32
// keep-alive connections): read one, list, patch, create and a 90/10 mix at 10,000 servers; then the
// write scenarios at 100 and at 100,000 servers. Every answer must be 2xx, or the row says so.
// The list (about 4 MB at 10,000 servers) is loaded by a client that only counts bytes: autocannon
// parsing 4 MB answers in this same process on 2 cores would otherwise be what is measured.
// Each comparison runs BENCH_ROUNDS rounds (default 3), the two sides in turn, the first side
// changing at each round: this VM's speed drifts within a minute, so a single pair of runs can put
// one side on a faster moment. A row gives the medians, the median of the rounds' ratios and their
// range, and the worst p99 of the rounds.
// Usage: npm run bench   (BENCH_SECONDS per run, default 5, after BENCH_WARMUP 1 s not counted;
// BENCH_ROUNDS 3; BENCH_SIZE 10000; BENCH_LARGE 100000)
// With BENCH_BASELINE=<another checkout, built>, the anchor is that build of the service instead of
// the floor, and only this first table is run: a change against the build without it, in one run.
import { join } from 'node:path';
import {
  type Load,
  load,
  newServer,
  rawGetLoad,
  type Scenario,
  SERVERS,
  seed,
  startFloor,
  startService,
  startTimed,
  type Target,
} from './targets.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SIZE = Number(process.env.BENCH_SIZE ?? 10_000);
const LARGE = Number(process.env.BENCH_LARGE ?? 100_000);
/** Creates `count` servers through the API (ids 1..count on a new target). */
const fill = (target: Target, count: number, from = 0) =>
  seed(target.url, count, (i) => ({ method: 'POST', path: SERVERS, body: newServer(from + i) }));

const random = (size: number) => 1 + Math.floor(Math.random() * size);
let created = 0;

function scenarios(size: number): Scenario[] {
  const patch = (i: number) => ({ path: `${SERVERS}/${random(size)}`, body: { port: 1024 + (i % 60000) } });
  return [
    { name: 'read-one', method: 'GET', request: () => ({ path: `${SERVERS}/${random(size)}` }) },
    { name: `list (${size.toLocaleString('en')})`, method: 'GET', request: () => ({ path: SERVERS }) },
    { name: 'patch', method: 'PATCH', request: patch },
    { name: 'create', method: 'POST', request: () => ({ path: SERVERS, body: newServer(10_000_000 + created++) }) },
  ];
}

/** 90% reads of one entry, 10% patches: two autocannon runs at once, 29 and 3 connections. */
async function mixed(target: Target, size: number) {
  const [reads, writes] = await Promise.all([
    load(target, { ...scenarios(size)[0], connections: 29 }, SECONDS),
    load(target, { ...scenarios(size)[2], connections: 3 }, SECONDS),
  ]);
  const rps = reads.rps + writes.rps;
  return {
    rps,
    requests: reads.requests + writes.requests,
    p50: reads.p50,
    p99: Math.max(reads.p99, writes.p99),
    failed: reads.failed + writes.failed,
  };
}

const row = (cells: (string | number)[]) =>
  console.log(cells.map((c, i) => (i === 0 ? String(c).padEnd(22) : String(c).padStart(12))).join(''));
const fmt = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) => `${n} ms`;
const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Two sides measured over ROUNDS rounds, in turn, the one that goes first changing at each round. */
interface Rounds {
  a: Load[];
  b: Load[];
  /** b's req/s over a's, round by round. */
  ratios: number[];
}

async function inRounds(
  a: () => Promise<Load>,
  b: () => Promise<Load>,
  between?: () => Promise<void>,
): Promise<Rounds> {
  const result: Rounds = { a: [], b: [], ratios: [] };
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      result.a.push(await a());
      result.b.push(await b());
    } else {
      result.b.push(await b());
      result.a.push(await a());
    }
    result.ratios.push(result.b[round].rps / result.a[round].rps);
    await between?.();
  }
  return result;
}

const rps = (loads: Load[]) => fmt(median(loads.map((l) => l.rps)));
const p50 = (loads: Load[]) => ms(median(loads.map((l) => l.p50)));
const p99 = (loads: Load[]) => ms(Math.max(...loads.map((l) => l.p99)));
const failed = (loads: Load[]) => loads.reduce((n, l) => n + l.failed, 0);
const ratio = ({ ratios }: Rounds) => `${median(ratios).toFixed(2)}×`;
const range = ({ ratios }: Rounds) =>
  ratios.length > 1 ? `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}` : '';

/**
 * How many servers a target holds (the create rounds add some), from its list's total.
 */
async function serverCount(target: Target): Promise<number> {
  return ((await (await fetch(`${target.url}${SERVERS}?limit=1`)).json()) as { total: number }).total;
}

/** RSS and how many servers it is for, read after the PATCH rounds: before the create rounds add servers. */
const memory = async (target: Target) => ({ rss: target.rss(), servers: await serverCount(target) });
const memoryLine = (what: string, m: { rss: number; servers: number }) =>
  console.log(
    `${what} RSS with ${m.servers.toLocaleString('en')} servers, after the PATCH rounds: ${m.rss.toFixed(0)} MiB`,
  );

async function compare(service: Target, floor: Target): Promise<{ rss: number; servers: number }> {
  let afterPatch = { rss: 0, servers: 0 };
  row(['scenario', 'service', 'floor', 'ratio', 'range', 'p50', 'p99', 'floor p99']);
  const run = (target: Target, scenario: Scenario, seconds = SECONDS): Promise<Load> =>
    scenario.name.startsWith('list') ? rawGetLoad(target, SERVERS, seconds) : load(target, scenario, seconds);
  const show = (name: string, r: Rounds) => {
    const lost = failed(r.a) + failed(r.b);
    const flag = lost > 0 ? `  (${failed(r.b)}+${failed(r.a)} failed)` : '';
    row([name, rps(r.b), rps(r.a), ratio(r), range(r), p50(r.b), p99(r.b), p99(r.a) + flag]);
  };
  for (const scenario of scenarios(SIZE)) {
    // The same load for WARMUP seconds first, not counted: both sides measured with their code warm.
    await run(service, scenario, WARMUP);
    await run(floor, scenario, WARMUP);
    show(
      scenario.name,
      await inRounds(
        () => run(floor, scenario),
        () => run(service, scenario),
      ),
    );
    if (scenario.method === 'PATCH') afterPatch = await memory(service);
  }
  show(
    'mixed 90/10',
    await inRounds(
      () => mixed(floor, SIZE),
      () => mixed(service, SIZE),
    ),
  );
  return afterPatch;
}

/**
 * The largest event-loop delay the service recorded since the last call (its /metrics: Node's
 * monitorEventLoopDelay as prom-client reads it, sampled every 10 ms, and reset at each read), in ms.
 */
async function eventLoopDelay(target: Target): Promise<number> {
  const text = await (await fetch(`${target.url}/metrics`)).text();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)![1]) * 1000;
}

/**
 * Sends one request (a JSON body when given), reads the whole answer, and returns how long that
 * took in ms; an answer that is not 2xx stops the bench.
 */
async function timed(target: Target, method: string, path: string, body?: unknown): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
  return performance.now() - started;
}

/**
 * Lists at `size` servers right after a change, three times: a PATCH, then the plain list (made
 * again, read as fast as it comes) and a page of ten. Their median times, and the largest
 * event-loop delay over them.
 */
async function listsAfterChange(target: Target, size: number): Promise<string> {
  const [plain, page]: number[][] = [[], []];
  await eventLoopDelay(target);
  for (let i = 0; i < 3; i++) {
    await timed(target, 'PATCH', `${SERVERS}/${random(size)}`, { port: 2000 + i });
    plain.push(await timed(target, 'GET', SERVERS));
    page.push(await timed(target, 'GET', `${SERVERS}?limit=10`));
  }
  const delay = await eventLoopDelay(target);
  return `each after a PATCH: whole list ${ms(Math.round(median(plain)))}, page of 10 ${ms(Math.round(median(page)))}; largest event-loop delay ${delay.toFixed(1)} ms`;
}

/**
 * The service's CPU time per request over the runs it measured, summed: its main thread, and its
 * other threads together. Where the two sizes differ, this says which side of the process pays.
 */
class CpuPerRequest {
  private main = 0;
  private others = 0;
  private requests = 0;

  constructor(private readonly target: Target) {}

  async during(run: () => Promise<Load>): Promise<Load> {
    const before = this.target.cpu();
    const result = await run();
    const after = this.target.cpu();
    if (before && after) {
      this.main += after.main - before.main;
      this.others += after.others - before.others;
      this.requests += result.requests;
    }
    return result;
  }

  toString(): string {
    if (this.requests === 0) return 'unknown (no /proc)';
    const us = (seconds: number) => fmt((seconds / this.requests) * 1e6);
    return `${us(this.main)} + ${us(this.others)} µs`;
  }
}

async function bySize() {
  console.log(`\nwrites by inventory size (service only; ratio: at ${LARGE.toLocaleString('en')} / at 100)`);
  row(['scenario', 'at 100', `at ${LARGE.toLocaleString('en')}`, 'ratio', 'range', 'p99 small', 'p99 large']);
  const small = await startService();
  await fill(small, 100);
  const large = await startService();
  const started = performance.now();
  await fill(large, LARGE);
  const seeding = (performance.now() - started) / 1000;
  const delays: string[] = [];
  const cpu: string[] = [];
  let afterPatch = { rss: 0, servers: 0 };
  for (const scenario of [scenarios(100)[2], scenarios(100)[3]]) {
    const onLarge = {
      ...scenario,
      request: scenario.name === 'patch' ? scenarios(LARGE)[2].request : scenario.request,
    };
    await load(small, scenario, WARMUP);
    await load(large, onLarge, WARMUP);
    let delay = 0;
    await eventLoopDelay(large); // starts the service's record afresh
    const [cpuSmall, cpuLarge] = [new CpuPerRequest(small), new CpuPerRequest(large)];
    const r = await inRounds(
      () => cpuSmall.during(() => load(small, scenario, SECONDS)),
      () => cpuLarge.during(() => load(large, onLarge, SECONDS)),
      // The record covers the runs on the small one too: the large one is idle then.
      async () => {
        delay = Math.max(delay, await eventLoopDelay(large));
      },
    );
    row([scenario.name, rps(r.a), rps(r.b), ratio(r), range(r), p99(r.a), p99(r.b)]);
    delays.push(`${scenario.name} ${delay.toFixed(1)} ms`);
    cpu.push(`${scenario.name} ${cpuSmall} at 100, ${cpuLarge} at ${LARGE.toLocaleString('en')}`);
    if (scenario.method === 'PATCH') afterPatch = await memory(large);
  }
  console.log(`largest event-loop delay during those runs at ${LARGE.toLocaleString('en')}: ${delays.join(', ')}`);
  console.log(`CPU per write, the main thread + the service's other threads: ${cpu.join('; ')}`);
  console.log(`lists at ${LARGE.toLocaleString('en')}, ${await listsAfterChange(large, LARGE)}`);
  console.log(`seeding ${LARGE.toLocaleString('en')} servers through the API: ${fmt(LARGE / seeding)} creates/s`);
  memoryLine('service', afterPatch);
  const held = await serverCount(large);
  await small.stop();
  await large.stop();
  return { dataDir: large.dataDir, servers: held };
}

async function startup({ dataDir, servers }: { dataDir: string; servers: number }) {
  const { target: again, seconds } = await startTimed(dataDir);
  console.log(
    `start-up on that data directory (${servers.toLocaleString('en')} servers after the create rounds, stored read models): ${seconds.toFixed(2)} s`,
  );
  console.log(`right after that start, ${await firstRequests(again, servers)}`);
  await again.stop();
}

/**
 * The first requests after a start, one after another, while the write validators are compiled in
 * the background: a creation, a PATCH and a page of ten. Their times, and the largest event-loop
 * delay over them (the record is started afresh first: the start itself answers no request).
 */
async function firstRequests(target: Target, servers: number): Promise<string> {
  await eventLoopDelay(target);
  const times = [
    await timed(target, 'POST', SERVERS, newServer(20_000_000)),
    await timed(target, 'PATCH', `${SERVERS}/${random(servers)}`, { port: 4000 }),
    await timed(target, 'GET', `${SERVERS}?limit=10`),
  ];
  const delay = await eventLoopDelay(target);
  return `a creation, a PATCH and a page of ten: ${times.map((t) => ms(Math.round(t))).join(', ')}; largest event-loop delay ${delay.toFixed(1)} ms`;
}

console.log(
  `node ${process.version}, ${ROUNDS} rounds of ${SECONDS} s per side and scenario after ${WARMUP} s of warm-up, 32 connections, ${SIZE.toLocaleString('en')} servers\n`,
);
const baseline = process.env.BENCH_BASELINE;
const anchor = baseline ? startService(undefined, {}, join(baseline, 'dist/src/cli.js')) : startFloor();
if (baseline) console.log(`anchor: the service built in ${baseline} (the floor columns are that build)\n`);
const [service, floor] = await Promise.all([startService(), anchor]);
await Promise.all([fill(service, SIZE), fill(floor, SIZE)]);
memoryLine('service', await compare(service, floor));
await Promise.all([service.stop(), floor.stop()]);
if (!baseline) await startup(await bySize());
