// The service against the framework floor, in the same run, under the same load (autocannon, 32
// keep-alive connections): read one, list, patch, create and a 90/10 mix at 10,000 servers; then the
// write scenarios at 100 and at 100,000 servers. Every answer must be 2xx, or the row says so.
// The list (about 4 MB at 10,000 servers) is loaded by a client that only counts bytes: autocannon
// parsing 4 MB answers in this same process on 2 cores would otherwise be what is measured.
// Usage: npm run bench   (BENCH_SECONDS per scenario, default 5, after BENCH_WARMUP 1 s not counted;
// BENCH_SIZE 10000; BENCH_LARGE 100000)
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
  type Target,
} from './targets.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
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
  return { rps, p50: reads.p50, p99: Math.max(reads.p99, writes.p99), failed: reads.failed + writes.failed };
}

const row = (cells: (string | number)[]) =>
  console.log(cells.map((c, i) => (i === 0 ? String(c).padEnd(22) : String(c).padStart(12))).join(''));
const fmt = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) => `${n} ms`;

async function compare(service: Target, floor: Target) {
  row(['scenario', 'service', 'floor', 'ratio', 'p50', 'p99', 'floor p99']);
  const run = (target: Target, scenario: Scenario, seconds = SECONDS): Promise<Load> =>
    scenario.name.startsWith('list') ? rawGetLoad(target, SERVERS, seconds) : load(target, scenario, seconds);
  for (const scenario of scenarios(SIZE)) {
    // The same load for WARMUP seconds first, not counted: both sides measured with their code warm.
    await run(service, scenario, WARMUP);
    await run(floor, scenario, WARMUP);
    const a = await run(service, scenario);
    const b = await run(floor, scenario);
    const flag = a.failed + b.failed > 0 ? `  (${a.failed}+${b.failed} failed)` : '';
    row([
      scenario.name,
      fmt(a.rps),
      fmt(b.rps),
      `${(a.rps / b.rps).toFixed(2)}×`,
      ms(a.p50),
      ms(a.p99),
      ms(b.p99) + flag,
    ]);
  }
  const a = await mixed(service, SIZE);
  const b = await mixed(floor, SIZE);
  row(['mixed 90/10', fmt(a.rps), fmt(b.rps), `${(a.rps / b.rps).toFixed(2)}×`, ms(a.p50), ms(a.p99), ms(b.p99)]);
}

/**
 * The largest event-loop delay the service recorded since the last call (its /metrics: Node's
 * monitorEventLoopDelay as prom-client reads it, sampled every 10 ms, and reset at each read), in ms.
 */
async function eventLoopDelay(target: Target): Promise<number> {
  const text = await (await fetch(`${target.url}/metrics`)).text();
  return Number(/^pmacontrol_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)![1]) * 1000;
}

async function bySize() {
  console.log(`\nwrites by inventory size (service only; ratio: at ${LARGE.toLocaleString('en')} / at 100)`);
  row(['scenario', 'at 100', `at ${LARGE.toLocaleString('en')}`, 'ratio', 'p99 small', 'p99 large']);
  const small = await startService();
  await fill(small, 100);
  const large = await startService();
  const started = performance.now();
  await fill(large, LARGE);
  const seeding = (performance.now() - started) / 1000;
  const delays: string[] = [];
  for (const scenario of [scenarios(100)[2], scenarios(100)[3]]) {
    const onLarge = {
      ...scenario,
      request: scenario.name === 'patch' ? scenarios(LARGE)[2].request : scenario.request,
    };
    await load(small, scenario, WARMUP);
    await load(large, onLarge, WARMUP);
    const a = await load(small, scenario, SECONDS);
    await eventLoopDelay(large); // starts the service's record afresh
    const b = await load(large, onLarge, SECONDS);
    row([scenario.name, fmt(a.rps), fmt(b.rps), `${(b.rps / a.rps).toFixed(2)}×`, ms(a.p99), ms(b.p99)]);
    delays.push(`${scenario.name} ${(await eventLoopDelay(large)).toFixed(1)} ms`);
  }
  console.log(`largest event-loop delay during those runs at ${LARGE.toLocaleString('en')}: ${delays.join(', ')}`);
  console.log(`seeding ${LARGE.toLocaleString('en')} servers through the API: ${fmt(LARGE / seeding)} creates/s`);
  console.log(`RSS with ${LARGE.toLocaleString('en')} servers: ${large.rss().toFixed(0)} MiB`);
  await small.stop();
  await large.stop();
  return large.dataDir;
}

async function startup(dataDir: string) {
  const started = performance.now();
  const again = await startService(dataDir);
  console.log(
    `start-up on that data directory (stored read models): ${((performance.now() - started) / 1000).toFixed(2)} s`,
  );
  await again.stop();
}

console.log(
  `node ${process.version}, ${SECONDS} s per scenario after ${WARMUP} s of warm-up, 32 connections, ${SIZE.toLocaleString('en')} servers\n`,
);
const [service, floor] = await Promise.all([startService(), startFloor()]);
await Promise.all([fill(service, SIZE), fill(floor, SIZE)]);
await compare(service, floor);
console.log(`service RSS with ${SIZE.toLocaleString('en')} servers: ${service.rss().toFixed(0)} MiB`);
await Promise.all([service.stop(), floor.stop()]);
await startup(await bySize());
