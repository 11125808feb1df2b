// Event rules' delivery (section 15), the service as users run it (dist/, SQLite store):
//   lag: 1,000 changes/s through the API, each matched by one of 10 rules, to a receiver answering in
//        50 ms — from a change's time to its arrival, p50/p99, beside the anchor: the same bodies POSTed
//        straight to the receiver at the same rate (goal: p99 ≤ 1 s); WEBHOOK_IN_FLIGHT=1 (each rule
//        in strict order) and =16
//   cost: PATCH throughput with 100 enabled rules that match nothing vs the same service without rules
//        (alternated rounds, same run; goal ≥ 0.95×)
//   slow: PATCH throughput and p99 beside a rule whose receiver takes 10 s per change, and without it
//   outage: the receiver down for BENCH_WEBHOOKS_DOWN_S seconds of writes (default 60; the goal's
//        figure is 600), then up, the service killed with SIGKILL during the catch-up and started again:
//        every change delivered, in order per rule, those seen twice counted
// Usage: npm run bench:webhooks   (BENCH_WEBHOOKS_SECONDS, default 10: seconds of writes at 1,000/s;
// BENCH_WEBHOOKS_ONLY=lag,cost,slow,outage: those rows only)
import { spawnSync } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { percentiles, scratchDir } from './lib.js';
import { load, startService, type Target } from './targets.js';

const SECONDS = Number(process.env.BENCH_WEBHOOKS_SECONDS ?? 10);
const DOWN_S = Number(process.env.BENCH_WEBHOOKS_DOWN_S ?? 60);
const TAGS = 100;
const RULES = 10;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Arrival {
  rule: number;
  position: number;
  lagMs: number;
}

/** A receiver answering 204 after `delayMs`, recording each arrival; `up` false: connections refused. */
class Receiver {
  arrivals: Arrival[] = [];
  private server?: Server;
  port = 0;

  constructor(private readonly delayMs: number) {}

  async up(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const { rule, change } = JSON.parse(body);
        this.arrivals.push({ rule: rule.id, position: change.position, lagMs: Date.now() - Date.parse(change.at) });
        setTimeout(() => res.writeHead(204).end(), this.delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

function adminToken(dataDir: string): string {
  const made = spawnSync(
    process.execPath,
    ['dist/src/cli.js', 'token', 'create', '--name', 'bench', '--role', 'admin'],
    {
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    },
  );
  return made.stdout.toString().trim().split('\n').pop()!;
}

async function call(
  target: Target,
  method: string,
  path: string,
  body: unknown,
  token?: string,
): Promise<{ id: number }> {
  const reply = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await reply.json()) as { id: number };
  if (!reply.ok) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(json)}`);
  return json;
}

/** TAGS tags, and RULES rules each matching the changes of a tenth of them (`in` on their names). */
async function setUp(target: Target, token: string, receiverPort: number, extra: Record<string, unknown> = {}) {
  const ids: number[] = [];
  for (let i = 0; i < TAGS; i++) {
    ids.push(
      (await call(target, 'POST', '/fr/api/config/tags', { name: `tag-${i}`, color: '#000000', background: '#FFFFFF' }))
        .id,
    );
  }
  for (let r = 0; r < RULES; r++) {
    const names = Array.from({ length: TAGS / RULES }, (_, k) => `tag-${k * RULES + r}`);
    await call(
      target,
      'POST',
      '/fr/api/event-rules',
      {
        name: `rule-${r}`,
        on: ['tags'],
        types: ['TagUpdated'],
        where: [{ field: 'name', in: names }],
        target: { url: `http://127.0.0.1:${receiverPort}/hook` },
        ...extra,
      },
      token,
    );
  }
  return ids;
}

const color = (i: number) => `#${(i % 0xffffff).toString(16).padStart(6, '0').toUpperCase()}`;

/** PATCHes of the tags at `perSecond` for `seconds`, by 32 clients each sending its next one when due. */
async function writeAt(target: Target, ids: number[], perSecond: number, seconds: number): Promise<number> {
  const total = perSecond * seconds;
  const started = performance.now();
  let next = 0;
  const client = async () => {
    while (next < total) {
      const n = next++;
      const due = started + (n * 1000) / perSecond;
      if (due > performance.now()) await pause(due - performance.now());
      await call(target, 'PATCH', `/fr/api/config/tags/${ids[n % ids.length]}`, { background: color(n + 1) });
    }
  };
  await Promise.all(Array.from({ length: 32 }, client));
  return total;
}

/** The anchor: the same bodies POSTed straight to a receiver at the same rate, a new connection each. */
async function anchorLag(perSecond: number, seconds: number): Promise<number[]> {
  const receiver = new Receiver(50);
  await receiver.up();
  const started = performance.now();
  const sent: Promise<void>[] = [];
  for (let i = 0; i < perSecond * seconds; i++) {
    const due = started + (i * 1000) / perSecond;
    if (due > performance.now()) await pause(due - performance.now());
    const body = JSON.stringify({
      rule: { id: i % RULES, name: 'anchor' },
      change: { position: i, at: new Date().toISOString() },
    });
    sent.push(
      new Promise((resolve) => {
        const req = request({ port: receiver.port, host: '127.0.0.1', method: 'POST', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', () => resolve());
        req.end(body);
      }),
    );
  }
  await Promise.all(sent);
  await receiver.down();
  return receiver.arrivals.map((a) => a.lagMs);
}

/** Changes delivered per rule in log order, none missing; how many arrived twice. */
function orderAndDuplicates(
  arrivals: Arrival[],
  expected: number,
): { inOrder: boolean; twice: number; missing: number } {
  const byRule = new Map<number, number[]>();
  for (const { rule, position } of arrivals) byRule.set(rule, [...(byRule.get(rule) ?? []), position]);
  let inOrder = true;
  let twice = 0;
  let distinct = 0;
  for (const positions of byRule.values()) {
    const firsts = positions.filter((p, i) => positions.indexOf(p) === i);
    twice += positions.length - firsts.length;
    distinct += firsts.length;
    if (firsts.some((p, i) => i > 0 && p < firsts[i - 1])) inOrder = false;
  }
  return { inOrder, twice, missing: expected - distinct };
}

async function lagRun(inFlight: number): Promise<void> {
  const receiver = new Receiver(50);
  await receiver.up();
  const dataDir = scratchDir('pmacontrol-bench-webhooks-');
  const target = await startService(dataDir, {
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    WEBHOOK_IN_FLIGHT: String(inFlight),
  });
  try {
    const token = adminToken(dataDir);
    const ids = await setUp(target, token, receiver.port);
    const written = await writeAt(target, ids, 1000, SECONDS);
    const until = Date.now() + 120_000;
    while (receiver.arrivals.length < written && Date.now() < until) await pause(100);
    const { p50, p99 } = percentiles(receiver.arrivals.map((a) => a.lagMs));
    const { inOrder, twice, missing } = orderAndDuplicates(receiver.arrivals, written);
    console.log(
      `lag, WEBHOOK_IN_FLIGHT=${String(inFlight).padEnd(3)} ${String(written).padStart(6)} changes  p50 ${p50.toFixed(0).padStart(6)} ms  p99 ${p99.toFixed(0).padStart(6)} ms  ${missing} missing, ${twice} twice, ${inOrder ? 'in order per rule' : 'NOT in order per rule'}`,
    );
  } finally {
    await target.stop();
    await receiver.down();
  }
}

/** TAGS tags and 100 disabled rules that never match (a transition of a field no PATCH changes). */
async function neverMatching(target: Target, token: string, receiverPort: number) {
  const ids: number[] = [];
  for (let i = 0; i < TAGS; i++) {
    ids.push(
      (await call(target, 'POST', '/fr/api/config/tags', { name: `t-${i}`, color: '#000000', background: '#FFFFFF' }))
        .id,
    );
  }
  const rules: number[] = [];
  for (let r = 0; r < 100; r++) {
    const body = {
      name: `never-${r}`,
      on: ['tags'],
      where: [{ field: 'color', to: '#ABCDEF' }],
      target: { url: `http://127.0.0.1:${receiverPort}/hook` },
      enabled: false,
    };
    rules.push((await call(target, 'POST', '/fr/api/event-rules', body, token)).id);
  }
  return { ids, rules };
}

async function costRun(): Promise<void> {
  const receiver = new Receiver(0);
  await receiver.up();
  const dataDir = scratchDir('pmacontrol-bench-webhooks-');
  const target = await startService(dataDir, { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
  try {
    const token = adminToken(dataDir);
    const { ids, rules } = await neverMatching(target, token, receiver.port);
    const setAll = async (enabled: boolean) => {
      for (const id of rules) await call(target, 'PATCH', `/fr/api/event-rules/${id}`, { enabled }, token);
      await pause(2000);
    };
    let n = 0;
    const patch = {
      name: 'PATCH',
      method: 'PATCH' as const,
      request: () => ({ path: `/fr/api/config/tags/${ids[n % TAGS]}`, body: { background: color(++n) } }),
    };
    const ratios: number[] = [];
    for (let round = 0; round < 3; round++) {
      const without = (await load(target, patch, 5)).rps;
      await setAll(true);
      const withRules = (await load(target, patch, 5)).rps;
      await setAll(false);
      ratios.push(withRules / without);
      console.log(
        `PATCH, 100 rules matching nothing  round ${round + 1}: ${withRules.toFixed(0)} req/s  vs  ${without.toFixed(0)} req/s without rules  (${(withRules / without).toFixed(2)}×)`,
      );
    }
    ratios.sort((a, b) => a - b);
    console.log(
      `PATCH, 100 rules matching nothing  median ${ratios[1].toFixed(2)}× of the same run without rules (goal ≥ 0.95×)`,
    );
  } finally {
    await target.stop();
    await receiver.down();
  }
}

/** PATCHes of the tags for 5 s: requests/s and p99. */
function patchLoad(target: Target, ids: number[]) {
  let n = 0;
  const patch = {
    name: 'PATCH',
    method: 'PATCH' as const,
    request: () => ({ path: `/fr/api/config/tags/${ids[n % ids.length]}`, body: { background: color(++n) } }),
  };
  return load(target, patch, 5);
}

/** The API beside a rule whose receiver takes 10 s to answer each change, and without it. */
async function slowRun(): Promise<void> {
  const receiver = new Receiver(10_000);
  await receiver.up();
  const dataDir = scratchDir('pmacontrol-bench-webhooks-');
  const target = await startService(dataDir, {
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    WEBHOOK_TIMEOUT_MS: '15000',
  });
  try {
    const token = adminToken(dataDir);
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(
        (await call(target, 'POST', '/fr/api/config/tags', { name: `s-${i}`, color: '#000000', background: '#FFFFFF' }))
          .id,
      );
    }
    const body = {
      name: 'slow',
      on: ['tags'],
      target: { url: `http://127.0.0.1:${receiver.port}/hook` },
      enabled: false,
    };
    const rule = (await call(target, 'POST', '/fr/api/event-rules', body, token)).id;
    for (let round = 0; round < 2; round++) {
      const without = await patchLoad(target, ids);
      await call(target, 'PATCH', `/fr/api/event-rules/${rule}`, { enabled: true }, token);
      const slow = await patchLoad(target, ids);
      await call(target, 'PATCH', `/fr/api/event-rules/${rule}`, { enabled: false }, token);
      console.log(
        `PATCH beside a 10 s receiver  round ${round + 1}: ${slow.rps.toFixed(0)} req/s p99 ${slow.p99.toFixed(1)} ms  vs  ${without.rps.toFixed(0)} req/s p99 ${without.p99.toFixed(1)} ms without it`,
      );
    }
  } finally {
    await target.stop();
    await receiver.down();
  }
}

async function outageRun(): Promise<void> {
  const receiver = new Receiver(5);
  await receiver.up();
  const port = receiver.port;
  await receiver.down();
  const dataDir = scratchDir('pmacontrol-bench-webhooks-');
  const env = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
  let target = await startService(dataDir, env);
  const token = adminToken(dataDir);
  const ids = await setUp(target, token, port);
  const written = await writeAt(target, ids, 100, DOWN_S);
  const upAt = performance.now();
  await receiver.up(port);
  while (receiver.arrivals.length < written / 3) await pause(50);
  target.child.kill('SIGKILL');
  await new Promise((resolve) => target.child.once('exit', resolve));
  const killedAfter = receiver.arrivals.length;
  target = await startService(dataDir, env);
  const until = Date.now() + 15 * 60_000;
  while (new Set(receiver.arrivals.map((a) => `${a.rule}/${a.position}`)).size < written && Date.now() < until)
    await pause(200);
  const seconds = (performance.now() - upAt) / 1000;
  const { inOrder, twice, missing } = orderAndDuplicates(receiver.arrivals, written);
  console.log(
    `outage: receiver down ${DOWN_S} s (${written} changes), killed -9 after ${killedAfter} delivered: all delivered ${seconds.toFixed(1)} s after it came up; ${missing} missing, ${twice} twice (around the kill), ${inOrder ? 'in order per rule' : 'NOT in order per rule'}`,
  );
  await target.stop();
  await receiver.down();
}

/** BENCH_WEBHOOKS_ONLY=lag,cost,slow,outage runs those rows only. */
const only = new Set((process.env.BENCH_WEBHOOKS_ONLY ?? 'lag,cost,slow,outage').split(','));
if (only.has('lag')) {
  const anchor = percentiles(await anchorLag(1000, SECONDS));
  console.log(
    `lag, anchor: POSTed straight            p50 ${anchor.p50.toFixed(0).padStart(6)} ms  p99 ${anchor.p99.toFixed(0).padStart(6)} ms`,
  );
  if (!process.env.BENCH_WEBHOOKS_IN_FLIGHT) await lagRun(1);
  await lagRun(Number(process.env.BENCH_WEBHOOKS_IN_FLIGHT ?? 16));
}
if (only.has('cost')) await costRun();
if (only.has('slow')) await slowRun();
if (only.has('outage')) await outageRun();
