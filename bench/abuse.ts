// Hostile clients against the real service (the compiled build, embedded store), each beside an anchor
// from the same run: the same measure with no hostile client.
//   1. 200 live-feed subscribers that never read, during 20,000 PATCHes: the service's peak memory, and
//      the slowest GET of one server made meanwhile (MAX_SUBSCRIBERS is raised to 250 so that all 200
//      are taken: the default, MAX_CONNECTIONS / 4 = 128, would refuse 72 of them).
//   2. At 100,000 servers, the slowest GET of one server during a `diff?from=0` read by its client.
//   3. The slowest GET during a `Last-Event-ID: 0` catch-up over the whole log (over 100,000 events).
//   4. /healthz while 600 idle connections are held (MAX_CONNECTIONS 512).
// Goal: no GET slower than 100 ms under any of them.
// Usage: npm run bench:abuse   (BENCH_SUBSCRIBERS 200, BENCH_WRITES 20000, BENCH_SERVERS 100000,
// BENCH_HELD 600)
import { connect, type Socket } from 'node:net';
import { percentiles, scratchDir } from './lib.js';
import { newServer, SERVERS, seed, startService, type Target } from './targets.js';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 200);
const WRITES = Number(process.env.BENCH_WRITES ?? 20_000);
const LARGE = Number(process.env.BENCH_SERVERS ?? 100_000);
const HELD = Number(process.env.BENCH_HELD ?? 600);
const FIRST = 10_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GETs of one server, one after another, until `done` settles: their durations in ms. */
async function probe(url: string, done: Promise<unknown>): Promise<number[]> {
  let over = false;
  void done.finally(() => {
    over = true;
  });
  const times: number[] = [];
  for (let i = 0; !over || times.length === 0; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${SERVERS}/${1 + ((i * 7919) % FIRST)}`);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET a server: ${response.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** The process's resident memory sampled every 50 ms until `done` settles: the highest, in MiB. */
async function peakRss(target: Target, done: Promise<unknown>): Promise<number> {
  let over = false;
  void done.finally(() => {
    over = true;
  });
  let peak = target.rss();
  while (!over) {
    peak = Math.max(peak, target.rss());
    await pause(50);
  }
  return peak;
}

/** The live feed clients the service holds (its gauge). */
async function feedClients(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^pmacontrol_feed_clients (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** A raw connection that asks for the live feed and then never reads. */
function stalledSubscriber(url: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET /fr/api/changes/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      // The answer's head, then nothing is read: the kernel's buffers fill, then the service's.
      socket.once('data', (chunk) => {
        if (!/^HTTP\/1\.1 200/.test(chunk.toString('latin1')))
          reject(new Error(chunk.toString('latin1').slice(0, 200)));
        socket.pause();
        resolve(socket);
      });
    });
    socket.on('error', () => {});
  });
}

const patches = (url: string) =>
  seed(
    url,
    WRITES,
    (i) => ({ method: 'PATCH', path: `${SERVERS}/${1 + (i % FIRST)}`, body: { port: 1024 + (i % 60_000) } }),
    16,
  );

interface Row {
  name: string;
  anchor: string;
  measured: string;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const slowest = (times: number[]) => `slowest GET ${ms(Math.max(...times))}, p99 ${ms(percentiles(times).p99)}`;

/** 1: peak memory and the slowest GET during the writes, without and with stalled subscribers. */
async function stalledDuringWrites(target: Target, rows: Row[]): Promise<void> {
  const quiet = patches(target.url);
  const [anchorTimes, anchorPeak] = await Promise.all([probe(target.url, quiet), peakRss(target, quiet), quiet]);
  const sockets = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => stalledSubscriber(target.url)));
  const before = target.rss();
  const loud = patches(target.url);
  const [times, peak] = await Promise.all([probe(target.url, loud), peakRss(target, loud), loud]);
  const after = target.rss();
  // The service's own count: a client paused here does not hear that its connection was cut.
  const left = await feedClients(target.url);
  for (const socket of sockets) socket.destroy();
  rows.push({
    name: `${WRITES.toLocaleString('en')} PATCHes, ${SUBSCRIBERS} stalled subscribers`,
    anchor: `no subscriber: peak RSS ${anchorPeak.toFixed(0)} MiB, ${slowest(anchorTimes)}`,
    measured:
      `peak RSS ${peak.toFixed(0)} MiB (${before.toFixed(0)} before, ${after.toFixed(0)} after), ` +
      `${slowest(times)}; ${SUBSCRIBERS - left} of the ${SUBSCRIBERS} subscribers cut off past their buffer`,
  });
}

/** 2: the slowest GET while a client reads `diff?from=0` over every server. */
async function duringDiff(target: Target, anchor: number[], rows: Row[]): Promise<void> {
  const started = performance.now();
  const diff = fetch(`${target.url}/fr/api/diff?from=0`).then(async (response) => {
    const bytes = (await response.arrayBuffer()).byteLength;
    if (!response.ok) throw new Error(`diff: ${response.status}`);
    return { bytes, seconds: (performance.now() - started) / 1000 };
  });
  const [times, { bytes, seconds }] = await Promise.all([probe(target.url, diff), diff]);
  rows.push({
    name: `diff?from=0 at ${LARGE.toLocaleString('en')} servers`,
    anchor: `nothing else: ${slowest(anchor)}`,
    measured: `${slowest(times)}; the diff: ${(bytes / 2 ** 20).toFixed(0)} MiB in ${seconds.toFixed(1)} s`,
  });
}

/** 3: the slowest GET while a client catches up on the whole log from `Last-Event-ID: 0`. */
async function duringCatchUp(target: Target, head: number, anchor: number[], rows: Row[]): Promise<void> {
  const started = performance.now();
  const controller = new AbortController();
  const caughtUp = (async () => {
    const response = await fetch(`${target.url}/fr/api/changes/stream`, {
      headers: { 'last-event-id': '0', accept: 'text/event-stream' },
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(`stream: ${response.status}`);
    const decoder = new TextDecoder();
    let partial = '';
    let last = 0;
    for await (const chunk of response.body!) {
      const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line.startsWith('id: ')) last = Number(line.slice(4));
      if (last >= head) break;
    }
    controller.abort();
    return (performance.now() - started) / 1000;
  })();
  const [times, seconds] = await Promise.all([probe(target.url, caughtUp), caughtUp]);
  rows.push({
    name: `Last-Event-ID: 0 over ${head.toLocaleString('en')} events`,
    anchor: `nothing else: ${slowest(anchor)}`,
    measured: `${slowest(times)}; the catch-up took ${seconds.toFixed(1)} s`,
  });
}

/** 4: /healthz from a new connection while HELD idle connections are open. */
async function healthWhileHeld(target: Target, rows: Row[]): Promise<void> {
  const health = async () => {
    const started = performance.now();
    const response = await fetch(`${target.url}/healthz`, { headers: { connection: 'close' } });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  };
  const anchor = await health();
  const { port } = new URL(target.url);
  const held = await Promise.all(
    Array.from(
      { length: HELD },
      () =>
        new Promise<Socket>((resolve) => {
          // Those the service turns away (past MAX_CONNECTIONS) end here too.
          const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
          socket.on('error', () => resolve(socket)).on('close', () => resolve(socket));
        }),
    ),
  );
  await pause(200);
  const open = held.filter((socket) => !socket.destroyed && socket.readyState === 'open').length;
  const answered = await Promise.race([health(), pause(10_000).then(() => ({ status: 'no answer', ms: 10_000 }))]);
  for (const socket of held) socket.destroy();
  rows.push({
    name: `/healthz with ${HELD} connections held`,
    anchor: `none held: ${anchor.status} in ${ms(anchor.ms)}`,
    measured: `${answered.status} in ${ms(answered.ms)} (${open} of the ${HELD} still open when it was asked)`,
  });
}

async function main(): Promise<void> {
  const target = await startService(scratchDir('pmacontrol-abuse-'), {
    MAX_SUBSCRIBERS: String(Math.max(250, SUBSCRIBERS + 50)),
  });
  const rows: Row[] = [];
  try {
    process.stderr.write(`creating ${FIRST} servers\n`);
    await seed(target.url, FIRST, (i) => ({ method: 'POST', path: SERVERS, body: newServer(i) }));
    process.stderr.write(`${WRITES} PATCHes, then again with ${SUBSCRIBERS} stalled subscribers\n`);
    await stalledDuringWrites(target, rows);
    process.stderr.write(`creating servers up to ${LARGE}\n`);
    await seed(target.url, LARGE - FIRST, (i) => ({ method: 'POST', path: SERVERS, body: newServer(FIRST + i) }));
    const anchor = await probe(target.url, pause(3000));
    process.stderr.write('diff?from=0\n');
    await duringDiff(target, anchor, rows);
    const head = (await (await fetch(`${target.url}/readyz`)).json()).position as number;
    process.stderr.write(`Last-Event-ID: 0 catch-up to ${head}\n`);
    await duringCatchUp(target, head, anchor, rows);
    process.stderr.write(`${HELD} connections held\n`);
    await healthWhileHeld(target, rows);
  } finally {
    await target.stop();
  }
  for (const { name, anchor, measured } of rows) console.log(`${name}\n  anchor:   ${anchor}\n  measured: ${measured}`);
}

await main();
