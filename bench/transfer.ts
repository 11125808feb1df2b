// Import of a PmaControl database (100,000 servers with tags) and export of the same inventory:
// time, peak RSS and size, each beside an anchor run in the same run on the same data:
//   import-pmacontrol  vs  reading the same rows with mysql2 and writing them out as JSON
//   export             vs  mariadb-dump of the same tables
// Usage: npm run bench:transfer   (BENCH_SERVERS, default 100000; MARIADB_BENCH_URL, default
// mysql://root@127.0.0.1:3306/test: a database pmacontrol_bench_<random> is made and dropped)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Connection, createConnection } from 'mysql2/promise';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 100_000);
const TAGS = 50;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli.js');
const base = process.env.MARIADB_BENCH_URL ?? 'mysql://root@127.0.0.1:3306/test';
const name = `pmacontrol_bench_${randomBytes(4).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${name}` }).toString();

interface Run {
  seconds: number;
  peakRssMiB: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command, sampling its peak RSS (VmHWM) from /proc until it exits. */
function measured(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let peak = 0;
    let stdout = '';
    let stderr = '';
    const sample = () => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {
        // exited between two samples
      }
    };
    const timer = setInterval(sample, 50);
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.once('exit', (code) => {
      clearInterval(timer);
      resolve({ seconds: (performance.now() - started) / 1000, peakRssMiB: peak / 1024, code, stdout, stderr });
    });
  });
}

async function insertRows(connection: Connection, table: string, rows: unknown[][]) {
  for (let i = 0; i < rows.length; i += 5000) {
    await connection.query(`INSERT INTO \`${table}\` VALUES ?`, [rows.slice(i, i + 5000)]);
  }
}

/** PmaControl's tables with SERVERS servers, each carrying two of TAGS tags, and their clients. */
async function fill(connection: Connection) {
  await connection.query(readFileSync(join(ROOT, 'test/fixtures/pmacontrol-schema.sql'), 'utf8'));
  const clients = Array.from({ length: 100 }, (_, i) => [i + 1, `client ${i + 1}`, '', '2026-01-01 00:00:00', 1]);
  await insertRows(connection, 'client', [...clients, [200, 'Default', '', '2026-01-01 00:00:00', 1]]);
  const envs = ['Production,prod,danger,P', 'Preprod,preprod,warning,U', 'Recipe,recette,default,R'];
  await insertRows(
    connection,
    'environment',
    envs.map((e, i) => [i + 1, ...e.split(',')]),
  );
  await insertRows(
    connection,
    'tag',
    Array.from({ length: TAGS }, (_, i) => [i + 1, `tag${i + 1}`, '#000000', '#FFFFFF']),
  );
  const servers = Array.from({ length: SERVERS }, (_, n) => {
    const i = n + 1;
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    return [
      i,
      (i % 100) + 1,
      (i % 3) + 1,
      `db-${i}`,
      '',
      ip,
      `db-${i}.example.net`,
      'monitor',
      `pw-${i}`,
      'mysql',
      0,
      3306,
    ];
  });
  const columns =
    'id, id_client, id_environment, name, display_name, ip, hostname, login, passwd, `database`, is_password_crypted, port';
  for (let i = 0; i < servers.length; i += 5000) {
    await connection.query(`INSERT INTO mysql_server (${columns}) VALUES ?`, [servers.slice(i, i + 5000)]);
  }
  const links = servers.flatMap(([id]) => [
    [null, id, ((id as number) % TAGS) + 1],
    [null, id, (((id as number) + 7) % TAGS) + 1],
  ]);
  await insertRows(connection, 'link__mysql_server__tag', links);
}

/** The anchor of the import: the same rows read with mysql2 and written out as JSON, nothing else. */
const READ_ANCHOR = `
import { createConnection } from 'mysql2/promise';
import { writeFileSync } from 'node:fs';
const c = await createConnection({ uri: process.argv[1], dateStrings: true });
const out = {};
for (const t of ['client','environment','tag','mysql_server','link__mysql_server__tag','ssh_key','backup_storage_area','alias_dns']) {
  out[t] = (await c.query('SELECT * FROM \\\`' + t + '\\\` ORDER BY 1'))[0];
}
await c.end();
writeFileSync(process.argv[2], JSON.stringify(out));
`;

const line = (label: string, run: Run, anchor: Run) =>
  console.log(
    `${label.padEnd(22)}${run.seconds.toFixed(1).padStart(7)} s  ${Math.round(run.peakRssMiB).toString().padStart(5)} MiB peak` +
      `   anchor ${anchor.seconds.toFixed(1)} s, ${Math.round(anchor.peakRssMiB)} MiB   ratio ${(run.seconds / anchor.seconds).toFixed(1)}× time`,
  );

const admin = await createConnection({ uri: base });
await admin.query(`CREATE DATABASE ${name}`);
const work = mkdtempSync(join(tmpdir(), 'pmacontrol-bench-'));
try {
  const connection = await createConnection({ uri: url, multipleStatements: true });
  await fill(connection);
  await connection.end();
  console.log(`PmaControl database: ${SERVERS.toLocaleString('en')} servers, ${TAGS} tags, 2 tags per server\n`);

  const env = { DATA_DIR: join(work, 'data'), CONFIG_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };
  const readAnchor = await measured(process.execPath, [
    '--input-type=module',
    '-e',
    READ_ANCHOR,
    url,
    join(work, 'rows.json'),
  ]);
  const imported = await measured(process.execPath, [CLI, 'import-pmacontrol', '--from', url], env);
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr.slice(-2000)}`);
  line('import-pmacontrol', imported, readAnchor);
  console.log(`  ${imported.stdout.trim()}`);

  const file = join(work, 'export.json');
  const exported = await measured(process.execPath, [CLI, 'export', '--out', file], env);
  const { username: user, password, hostname, port } = new URL(url);
  const dumpAnchor = await measured('sh', [
    '-c',
    `mariadb-dump -h ${hostname} -P ${port || 3306} -u ${user} ${password ? `-p${password}` : ''} ${name} > ${join(work, 'dump.sql')}`,
  ]);
  line('export (CLI)', exported, dumpAnchor);
  const size = statSync(file).size / 1024 / 1024;
  const dump = statSync(join(work, 'dump.sql')).size / 1024 / 1024;
  console.log(`  export ${size.toFixed(1)} MiB (mariadb-dump of the same tables: ${dump.toFixed(1)} MiB)`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.end();
  rmSync(work, { recursive: true, force: true });
}
