// The auditor's questions on a large log: a page of changes with one filter, ?at= on one entry and on
// the list of servers, the live feed to 100 clients, and the memory the service holds.
// Usage: npm run bench:changes   (BENCH_EVENTS, default 1,000,000; BENCH_SERVERS, default 10,000)
import { ACTORS, dataDir, EVENTS, generate, SERVERS, serve } from './large-log.js';
import { percentiles, rssMiB, table, timedGets as timed } from './lib.js';

/** 100 live clients; how long after a write is sent each of them has it. */
async function feedLatency(url: string, clients: number, writes: number): Promise<number[]> {
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const readers = await Promise.all(
    Array.from({ length: clients }, async () => {
      const response = await fetch(`${url}/fr/api/changes/stream?type=TagCreated`);
      const reader = response.body!.getReader();
      void (async () => {
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += new TextDecoder().decode(value);
          for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
            const name = /"name":"([^"]+)"/.exec(buffer.slice(0, cut))?.[1];
            if (name && sentAt.has(name)) latencies.push(performance.now() - sentAt.get(name)!);
            buffer = buffer.slice(cut + 2);
          }
        }
      })();
      return reader;
    }),
  );
  for (let i = 0; i < writes; i++) {
    const name = `live-${i}`;
    sentAt.set(name, performance.now());
    const response = await fetch(`${url}/fr/api/config/tags`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, color: '#000000', background: '#FFFFFF' }),
    });
    await response.arrayBuffer();
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 500));
  for (const reader of readers) await reader.cancel();
  if (latencies.length !== clients * writes) throw new Error(`${latencies.length} deliveries of ${clients * writes}`);
  return latencies;
}

console.log(`node ${process.version}; a log of ${EVENTS} events over ${SERVERS} servers, in ${dataDir}`);
const made = await generate();
console.log(
  `generated through the service's write path: ${made.events} events in ${made.seconds.toFixed(1)} s (${(made.events / made.seconds).toFixed(0)} events/s)`,
);
const service = await serve();
console.log(`start-up with stored read models: ${service.startMs.toFixed(0)} ms`);
const head = EVENTS;
const rows: [string, number[], string][] = [];
rows.push([
  'changes, resource+id (1 server)',
  await timed(service.url, 50, (i) => `/fr/api/changes?resource=servers&id=${1 + i * 37}`),
  'p50 ≤ 50 ms',
]);
rows.push([
  'changes, actor',
  await timed(service.url, 50, (i) => `/fr/api/changes?actor=${ACTORS[i % 5]}&after=${(i * 9973) % head}`),
  'p50 ≤ 50 ms',
]);
rows.push([
  'changes, type',
  await timed(service.url, 50, (i) => `/fr/api/changes?type=ServerUpdated&order=desc&before=${head - i * 1000}`),
  'p50 ≤ 50 ms',
]);
rows.push([
  'changes, request_id',
  await timed(service.url, 50, (i) => `/fr/api/changes?request_id=req-${i * 1111}`),
  'p50 ≤ 50 ms',
]);
rows.push([
  'changes, resource=servers',
  await timed(service.url, 50, (i) => `/fr/api/changes?resource=servers&after=${(i * 19_997) % head}`),
  'p50 ≤ 50 ms',
]);
rows.push([
  'changes, resource=tags',
  await timed(service.url, 50, () => '/fr/api/changes?resource=tags&order=desc'),
  'p50 ≤ 50 ms',
]);
rows.push([
  'changes, since (last 5 %)',
  await timed(service.url, 20, () => `/fr/api/changes?since=${new Date(Date.now() - 60_000).toISOString()}`),
  'p50 ≤ 50 ms',
]);
rows.push([
  '?at= one server',
  await timed(
    service.url,
    50,
    (i) => `/fr/api/config/servers/${1 + i * 97}?at=${Math.floor((head * ((i % 10) + 1)) / 11)}`,
  ),
  'p50 ≤ 20 ms',
]);
rows.push([
  `?at= list of ${SERVERS} servers`,
  await timed(service.url, 10, (i) => `/fr/api/config/servers?at=${Math.floor((head * ((i % 5) + 1)) / 6)}`),
  'p50 ≤ 500 ms',
]);
table(rows.map(([name, times, target]) => ({ name, ...percentiles(times), target })));
const rssBefore = rssMiB(service.pid);
const feed = percentiles(await feedLatency(service.url, 100, 20));
console.log(
  `live feed, 100 clients × 20 changes: p50 ${feed.p50.toFixed(1)} ms, p99 ${feed.p99.toFixed(1)} ms (target p99 ≤ 100 ms)`,
);
console.log(
  `service memory (RSS): ${rssBefore.toFixed(0)} MiB after the queries, ${rssMiB(service.pid).toFixed(0)} MiB after the feed`,
);
service.stop();
