// PmaControl's push of a whole fleet against the same work done as one PATCH per server, on one
// service in the same run:
//   first push (every server created)       vs  nothing (one request; its time alone)
//   unchanged push (goal: ≤ 2 s, 0 events)  vs  one unchanged PATCH per server (16 in flight)
//   push changing every password            vs  one PATCH of the password per server (16 in flight)
// Usage: npm run bench:push   (BENCH_SERVERS, default 10000)
import { measure } from './lib.js';
import { startService, type Target } from './targets.js';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 10_000);
const PUSH = '/fr/api/pmacontrol/push';

const item = (i: number, password: string) => ({
  fqdn: `db${i}.bench.example.net`,
  port: String(3306 + (i % 4)),
  login: 'monitor',
  password,
  tag: [`rack-${i % 40}`, 'bench'],
  organization: `client-${i % 25}`,
  environment: 'prod',
  ssh_port: '22',
});
const inventory = (password: (i: number) => string) => ({
  mysql: Array.from({ length: SERVERS }, (_, i) => item(i, password(i))),
});

async function post(target: Target, path: string, body: unknown, method = 'POST') {
  const started = performance.now();
  const reply = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${path}: ${reply.status} ${text.slice(0, 300)}`);
  return { seconds: (performance.now() - started) / 1000, json: JSON.parse(text) };
}

/** The position of the last event: what a write that records nothing leaves as it is. */
async function lastPosition(target: Target): Promise<number> {
  const reply = await fetch(`${target.url}/fr/api/changes?order=desc&limit=1`);
  return ((await reply.json()) as { items: { position: number }[] }).items[0]?.position ?? 0;
}

const counts = (json: { mysql: Record<string, unknown[]> }) =>
  Object.entries(json.mysql)
    .map(([name, list]) => `${list.length} ${name}`)
    .join(', ');

/** The time of `SERVERS` PATCHes, 16 in flight: the anchor of a push. */
async function patches(target: Target, name: string, ids: number[], body: (i: number) => unknown): Promise<number> {
  const started = performance.now();
  const patch = (i: number) => post(target, `/fr/api/config/servers/${ids[i]}`, body(i), 'PATCH').then(() => undefined);
  await measure(name, SERVERS, 16, patch);
  return (performance.now() - started) / 1000;
}

/** A push, timed, with what it recorded. */
async function timedPush(target: Target, name: string, password: (i: number) => string) {
  const before = await lastPosition(target);
  const { seconds, json } = await post(target, PUSH, inventory(password));
  const recorded = (await lastPosition(target)) - before;
  console.log(`${name.padEnd(30)} ${seconds.toFixed(2).padStart(7)} s   ${counts(json)}; ${recorded} events`);
  return { seconds, json };
}

async function main() {
  const target = await startService();
  try {
    console.log(`push of ${SERVERS} servers (${SERVERS / 4} addresses × 4 ports, 25 clients, 41 tags)`);
    await timedPush(target, 'first push', (i) => `pw-${i}`);
    const same = await timedPush(target, 'unchanged push (goal ≤ 2 s, 0)', (i) => `pw-${i}`);
    const ids: number[] = same.json.mysql.unchanged.map((done: { id: number }) => done.id);
    const unchanged = await patches(target, 'unchanged PATCH per server', ids, (i) => ({ passwd: `pw-${i}` }));
    console.log(`  unchanged push / PATCHes: ${(same.seconds / unchanged).toFixed(2)}× the time`);
    const changed = await timedPush(target, 'push changing every password', (i) => `rotated-${i}`);
    const changing = await patches(target, 'password PATCH per server', ids, (i) => ({ passwd: `again-${i}` }));
    console.log(`  changing push / PATCHes: ${(changed.seconds / changing).toFixed(2)}× the time`);
  } finally {
    await target.stop();
  }
}

await main();
