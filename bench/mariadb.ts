// The service on the MariaDB store: durable PATCH and POST from one instance and from two together,
// how soon a write on one instance is readable on the other, and the start-up of a fresh instance
// (empty DATA_DIR) on a 100,000-event log. SQLite, on the same machine in the same run, is the anchor.
// Usage: npm run bench:mariadb   (MARIADB_BENCH_URL, default mysql://root@127.0.0.1:3306/test: a
// database pmacontrol_bench_<random> is created there and dropped at the end)
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { CONFIG_STREAM } from '../src/domain/shared/types.js';
import { MariadbEventStore } from '../src/event-store/mariadb/store.js';
import { type Load, load, newServer, type Scenario, SERVERS, seed, startService, type Target } from './targets.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const base = process.env.MARIADB_BENCH_URL ?? 'mysql://root@127.0.0.1:3306/test';
const name = `pmacontrol_bench_${randomBytes(4).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${name}` }).toString();
const admin = await createConnection({ uri: base });
await admin.query(`CREATE DATABASE ${name}`);
const env = { EVENT_STORE: 'mariadb', MARIADB_URL: url, CONFIG_SECRET_KEY: randomBytes(32).toString('hex') };

let made = 0;
const patch: Scenario = {
  name: 'patch',
  method: 'PATCH',
  request: (i) => ({ path: `${SERVERS}/${1 + Math.floor(Math.random() * 1000)}`, body: { port: 1024 + (i % 60000) } }),
};
const create: Scenario = {
  name: 'create',
  method: 'POST',
  request: () => ({ path: SERVERS, body: newServer(1e6 + made++) }),
};
const row = (label: string, l: Load) =>
  console.log(
    `${label.padEnd(34)}${Math.round(l.rps).toLocaleString('en').padStart(8)} req/s  p50 ${l.p50} ms  p99 ${l.p99} ms${l.failed ? `  (${l.failed} failed)` : ''}`,
  );

async function visibility(a: Target, b: Target, rounds = 200) {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const written = await fetch(`${a.url}${SERVERS}/1`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ port: 2000 + i }),
    }).then((r) => r.json());
    for (;;) {
      const seen = await fetch(`${b.url}${SERVERS}/1`).then((r) => r.json());
      if (seen.item.version >= written.item.version) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    times.push(performance.now() - started);
  }
  times.sort((x, y) => x - y);
  return { p50: times[Math.floor(rounds / 2)].toFixed(1), p99: times[Math.floor(rounds * 0.99)].toFixed(1) };
}

try {
  const sqlite = await startService();
  await seed(sqlite.url, 1000, (i) => ({ method: 'POST', path: SERVERS, body: newServer(i) }));
  const a = await startService(undefined, env);
  await seed(a.url, 1000, (i) => ({ method: 'POST', path: SERVERS, body: newServer(i) }));
  console.log(`node ${process.version}, ${SECONDS} s per row, 32 connections, 1,000 servers\n`);
  row('SQLite, one instance: patch', await load(sqlite, patch, SECONDS));
  row('SQLite, one instance: create', await load(sqlite, create, SECONDS));
  await sqlite.stop();
  row('MariaDB, one instance: patch', await load(a, patch, SECONDS));
  row('MariaDB, one instance: create', await load(a, create, SECONDS));
  const b = await startService(undefined, env);
  const both = async (s: Scenario) => {
    const [x, y] = await Promise.all([
      load(a, { ...s, connections: 16 }, SECONDS),
      load(b, { ...s, connections: 16 }, SECONDS),
    ]);
    return {
      rps: x.rps + y.rps,
      requests: x.requests + y.requests,
      p50: Math.max(x.p50, y.p50),
      p99: Math.max(x.p99, y.p99),
      failed: x.failed + y.failed,
    };
  };
  row('MariaDB, two instances: patch', await both(patch));
  row('MariaDB, two instances: create', await both(create));
  const seen = await visibility(a, b);
  console.log(`\nwritten on one instance, readable on the other: p50 ${seen.p50} ms, p99 ${seen.p99} ms`);
  await Promise.all([a.stop(), b.stop()]);

  // A 100,000-event log, then a fresh instance (empty DATA_DIR) starting on it.
  const store = new MariadbEventStore({ url });
  let revision = (await store.readStream(CONFIG_STREAM)).length - 1;
  for (let n = 0; revision < 100_000; n++) {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      type: 'TagCreated',
      data: { id: 100_000 + n * 1000 + i, name: `bulk-${n}-${i}`, color: '#000000', background: '#FFFFFF' },
      metadata: { actor: 'bench', request_id: `b-${n}-${i}`, at: new Date().toISOString(), schema: 2 },
    }));
    revision = (await store.append(CONFIG_STREAM, events, revision)).nextRevision;
  }
  await store.close();
  const started = performance.now();
  const fresh = await startService(undefined, env);
  console.log(
    `fresh instance on a ${(revision + 1).toLocaleString('en')}-event log: listening after ${((performance.now() - started) / 1000).toFixed(2)} s`,
  );
  await fresh.stop();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.end();
}
