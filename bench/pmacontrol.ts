// The projection into PmaControl's tables (PMACONTROL_DB_URL), on the local MariaDB:
//   creates at full rate, with the projection    vs  the same creates without it (req/s, same run)
//   lag: from a create's answer to its row in mysql_server, p50 / p99 (goal: p99 ≤ 1 s)
//   catch-up of a backlog of PATCHes (events/s)   vs  mysql2 writing as many rows alone (rows/s)
//   drift at 12,000 servers and a 10 MiB junk push (bench/pmacontrol-drift.ts)
// Usage: npm run bench:pmacontrol   (BENCH_CREATES, default 20000; BENCH_BACKLOG, default 20000;
// BENCH_DRIFT_SERVERS, default 12000;
// MARIADB_BENCH_URL, default mysql://root@127.0.0.1:3306/test: databases pmacontrol_bench_* are made and dropped)
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Connection, createConnection } from 'mysql2/promise';
import { measure, percentiles, scratchDir } from './lib.js';
import { driftAndJunk } from './pmacontrol-drift.js';
import { newServer, SERVERS, startService, type Target } from './targets.js';

const CREATES = Number(process.env.BENCH_CREATES ?? 20_000);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCHEMA = readFileSync(join(ROOT, 'test/fixtures/pmacontrol-schema.sql'), 'utf8');
const base = process.env.MARIADB_BENCH_URL ?? 'mysql://root@127.0.0.1:3306/test';

async function database(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `pmacontrol_bench_${randomBytes(4).toString('hex')}`;
  const admin = await createConnection({ uri: base, multipleStatements: true });
  await admin.query(`CREATE DATABASE ${name}; USE ${name}; ${SCHEMA}`);
  await admin.end();
  const url = Object.assign(new URL(base), { pathname: `/${name}` }).toString();
  return {
    url,
    drop: async () => {
      const connection = await createConnection({ uri: base });
      await connection.query(`DROP DATABASE IF EXISTS ${name}`);
      await connection.end();
    },
  };
}

async function post(target: Target, method: string, path: string, body: unknown) {
  const reply = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await reply.json()) as { id: number };
  if (!reply.ok) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(json)}`);
  return json;
}

/** Creates `CREATES` servers 16 at a time; with `rows`, the time from each answer to its row. */
async function creates(target: Target, name: string, rows?: Connection): Promise<{ rps: number; lags: number[] }> {
  const answered = new Map<number, number>();
  const lags: number[] = [];
  let seen = 0;
  let polling = rows !== undefined;
  const poll = (async () => {
    while (polling) {
      const [[row]] = (await rows!.query('SELECT MAX(id) AS id FROM mysql_server')) as unknown as [[{ id: unknown }]];
      const now = performance.now();
      for (let id = seen + 1; id <= Number(row.id ?? 0); id++) lags.push(Math.max(0, now - (answered.get(id) ?? now)));
      seen = Math.max(seen, Number(row.id ?? 0));
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const rps = await measure(name, CREATES, 16, async (i) => {
    const { id } = await post(target, 'POST', SERVERS, newServer(i));
    answered.set(id, performance.now());
  });
  while (rows && seen < CREATES) await new Promise((r) => setTimeout(r, 20));
  polling = false;
  await poll;
  return { rps, lags };
}

async function status(target: Target): Promise<{ lag: number; position: number }> {
  return (await fetch(`${target.url}/fr/api/pmacontrol/status`)).json() as Promise<{ lag: number; position: number }>;
}

/** mysql2 alone writing `count` rows of mysql_server in one transaction, 500 a statement: the anchor of a catch-up. */
async function rowsAlone(url: string, count: number): Promise<number> {
  const connection = await createConnection({ uri: url });
  const started = performance.now();
  await connection.query('START TRANSACTION');
  for (let start = 0; start < count; start += 500) {
    const rows = Array.from({ length: Math.min(500, count - start) }, (_, k) => {
      const i = 1_000_000 + start + k;
      return [
        i,
        99,
        1,
        `alone-${i}`,
        `alone-${i}`,
        `10.200.${(i >> 8) & 255}.${i & 255}`,
        'monitor',
        'x'.repeat(88),
        'mysql',
        3306,
        1,
      ];
    });
    await connection.query(
      'INSERT INTO mysql_server (id, id_client, id_environment, name, display_name, ip, login, passwd, `database`, port, is_password_crypted) VALUES ?',
      [rows],
    );
  }
  await connection.query('COMMIT');
  await connection.end();
  return count / ((performance.now() - started) / 1000);
}

async function main() {
  const key = join(scratchDir('pmacontrol-bench-key-'), 'crypt.key');
  writeFileSync(key, randomBytes(32).toString('hex'));
  const db = await database();
  const dataDir = scratchDir('pmacontrol-bench-');
  const env = { PMACONTROL_DB_URL: db.url, PMACONTROL_CRYPT_KEY_FILE: key };
  try {
    const anchor = await startService(scratchDir('pmacontrol-bench-anchor-'));
    const without = await creates(anchor, 'create, no projection').finally(() => anchor.stop());
    const service = await startService(dataDir, env);
    const rows = await createConnection({ uri: db.url });
    const { rps, lags } = await creates(service, 'create, with the projection', rows).finally(() => service.stop());
    await rows.end();
    const { p50, p99 } = percentiles(lags);
    console.log(`  create rate with / without the projection: ${(rps / without.rps).toFixed(2)}×`);
    console.log(
      `  lag from an answer to its row: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (goal: p99 ≤ 1000 ms)`,
    );

    // A backlog: PATCHes made while the service runs without PMACONTROL_DB_URL, then caught up.
    const quiet = await startService(dataDir);
    await measure('PATCH (no projection)', BACKLOG, 16, (i) =>
      post(quiet, 'PATCH', `${SERVERS}/${(i % CREATES) + 1}`, { login: `m${i}` }).then(() => undefined),
    ).finally(() => quiet.stop());
    const started = performance.now();
    const back = await startService(dataDir, env);
    const from = (await status(back)).position;
    while ((await status(back)).lag > 0 || (await status(back)).position === from)
      await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - started) / 1000;
    await back.stop();
    const alone = await rowsAlone(db.url, BACKLOG);
    const rate = BACKLOG / seconds;
    console.log(
      `catch-up of ${BACKLOG} PATCHes: ${rate.toFixed(0)} events/s (start included) vs mysql2 alone ${alone.toFixed(0)} rows/s (${(rate / alone).toFixed(2)}×)`,
    );
  } finally {
    await db.drop();
  }
  const second = await database();
  try {
    await driftAndJunk(second.url, { PMACONTROL_DB_URL: second.url, PMACONTROL_CRYPT_KEY_FILE: key });
  } finally {
    await second.drop();
  }
}

await main();
