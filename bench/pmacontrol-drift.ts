// The rows of bench/pmacontrol.ts that ask what PmaControl's wing costs a reader:
//   drift at 12,000 servers, 8 readers at once (p50 / p99; goal p99 ≤ 100 ms), the slowest /healthz
//     answered meanwhile (goal ≤ 50 ms) beside /healthz alone (the anchor), and the readers again
//     after a row changed in PmaControl (one computation shared)
//   a 10 MiB push of junk: how soon it is refused (goal ≤ 1 s) beside a push of one server (the
//     anchor), and how much the process grew meanwhile (goal ≤ 100 MB)
import { createConnection } from 'mysql2/promise';
import { measure, percentiles, scratchDir } from './lib.js';
import { newServer, SERVERS, startService, type Target } from './targets.js';

const DRIFT_SERVERS = Number(process.env.BENCH_DRIFT_SERVERS ?? 12_000);
const READERS = 8;
const ROUNDS = 25;

async function timed(url: string, init?: RequestInit): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const reply = await fetch(url, init);
  await reply.arrayBuffer();
  return { ms: performance.now() - started, status: reply.status };
}

/** `/healthz` every 10 ms while `work` runs: each answer's time. */
async function probing<T>(target: Target, work: () => Promise<T>): Promise<{ result: T; health: number[] }> {
  const health: number[] = [];
  let running = true;
  const probe = (async () => {
    while (running) {
      health.push((await timed(`${target.url}/healthz`)).ms);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const result = await work().finally(() => {
    running = false;
  });
  await probe;
  return { result, health };
}

/** READERS readers asking for the drift ROUNDS times each: every answer's time. */
async function readers(target: Target, rounds = ROUNDS): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      for (let i = 0; i < rounds; i++) {
        const { ms, status } = await timed(`${target.url}/fr/api/pmacontrol/drift`);
        if (status !== 200) throw new Error(`drift answered ${status}`);
        times.push(ms);
      }
    }),
  );
  return times;
}

async function caughtUp(target: Target): Promise<void> {
  for (;;) {
    const status = (await (await fetch(`${target.url}/fr/api/pmacontrol/status`)).json()) as {
      lag: number;
      position: number;
    };
    if (status.lag === 0 && status.position > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Drift at DRIFT_SERVERS servers, then the junk push, on a service of their own over `dbUrl`. */
export async function driftAndJunk(dbUrl: string, env: Record<string, string>): Promise<void> {
  const service = await startService(scratchDir('pmacontrol-bench-drift-'), {
    ...env,
    PMACONTROL_DRIFT_INTERVAL_MS: '0',
  });
  try {
    await measure('create (drift set-up)', DRIFT_SERVERS, 16, async (i) => {
      const reply = await fetch(`${service.url}${SERVERS}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(newServer(3_000_000 + i)),
      });
      if (reply.status !== 201) throw new Error(`create answered ${reply.status}`);
    });
    await caughtUp(service);
    const alone = await probing(service, () => new Promise((r) => setTimeout(r, 2000)));
    const first = await timed(`${service.url}/fr/api/pmacontrol/drift`);
    const { result: times, health } = await probing(service, () => readers(service));
    const { p50, p99 } = percentiles(times);
    const anchor = percentiles(alone.health);
    console.log(`drift at ${DRIFT_SERVERS} servers: computed once in ${first.ms.toFixed(0)} ms`);
    console.log(
      `  ${READERS} readers × ${ROUNDS}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (goal: p99 ≤ 100 ms)`,
    );
    console.log(
      `  /healthz meanwhile: slowest ${Math.max(...health).toFixed(1)} ms (goal ≤ 50 ms) vs alone p99 ${anchor.p99.toFixed(1)} ms`,
    );
    const connection = await createConnection({ uri: dbUrl });
    await connection.query("UPDATE mysql_server SET display_name = 'changed in PmaControl' ORDER BY id LIMIT 1");
    await connection.end();
    const changed = await probing(service, () => readers(service, 1));
    console.log(
      `  after a row changed in PmaControl: ${READERS} readers at once, p99 ${percentiles(changed.result).p99.toFixed(0)} ms ` +
        `(one computation shared), /healthz slowest ${Math.max(...changed.health).toFixed(1)} ms`,
    );
    await junkPush(service);
  } finally {
    await service.stop();
  }
}

/** A 10 MiB body of tiny items, beside a push of one server; the process's resident memory sampled meanwhile. */
async function junkPush(service: Target): Promise<void> {
  const push = (body: string) =>
    timed(`${service.url}/fr/api/pmacontrol/push`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
  const one = { mysql: [{ fqdn: 'junk-anchor.example.net', login: 'm', password: 'p', environment: 'prod' }] };
  const anchor = await push(JSON.stringify(one));
  const junk = `{"mysql":[${'{},'.repeat((10 * 1024 * 1024) / 3)}{}]}`;
  const before = service.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, service.rss());
  }, 5);
  const refused = await push(junk).finally(() => clearInterval(sampler));
  peak = Math.max(peak, service.rss());
  console.log(
    `junk push of ${(junk.length / 1024 / 1024).toFixed(1)} MiB (${(junk.length / 3 / 1e6).toFixed(1)} M items): ` +
      `${refused.status} in ${refused.ms.toFixed(0)} ms (goal ≤ 1 s) vs a push of one server ${anchor.ms.toFixed(0)} ms; ` +
      `RSS +${(peak - before).toFixed(0)} MiB (goal ≤ 100 MB)`,
  );
}
