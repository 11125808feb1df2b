// Replay speed: rebuild every read model from a SQLite log of BENCH_EVENTS events, beside its anchor:
// the rows that rebuild wrote, written again into a new file with the same tables, statements and
// indexes from values ready in memory (no log to read, no fold, no JSON): what SQLite alone costs.
// Two logs: one of small tag events written straight into the store, and one of servers written
// through the API by the service (one creation in ten events, then PATCHes), as inventories are.

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { rebuild } from '../src/application/replay.js';
import { genesisEvents } from '../src/domain/genesis.js';
import type { DomainEvent } from '../src/domain/shared/types.js';
import { CONFIG_STREAM } from '../src/domain/shared/types.js';
import { SqliteEventStore } from '../src/event-store/sqlite/store.js';
import { leafOf } from '../src/log/index.js';
import { RowWriter } from '../src/read-models/sqlite/rows.js';
import { INDEXES, TABLES } from '../src/read-models/sqlite/schema.js';
import { SqliteReadModelStore } from '../src/read-models/sqlite/store.js';
import Database from '../src/sqlite/driver.js';
import { scratchDir } from './lib.js';
import { newServer, SERVERS, seed, startService, startTimed } from './targets.js';

const total = Number(process.env.BENCH_EVENTS ?? 50_000);

/** A log of TagCreated and TagUpdated events, appended 1,000 at a time. */
async function tagLog(): Promise<string> {
  const dir = scratchDir('pmacontrol-replay-');
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  const metadata = () => ({
    actor: 'bench',
    request_id: randomBytes(8).toString('hex'),
    at: new Date().toISOString(),
    schema: 2,
  });
  let revision = -1;
  const append = async (events: DomainEvent[]) => {
    const records = events.map((e) => ({ ...e, metadata: metadata() }));
    revision = (await store.append(CONFIG_STREAM, records, revision === -1 ? 'no_stream' : revision)).nextRevision;
  };
  await append(genesisEvents('0'.repeat(32)));
  const batch: DomainEvent[] = [];
  for (let i = 1; revision + batch.length < total - 1; i++) {
    batch.push({ type: 'TagCreated', data: { id: i, name: `t${i}`, color: '#000000', background: '#FFFFFF' } });
    batch.push({ type: 'TagUpdated', data: { id: i, changes: { color: '#111111' } } });
    if (batch.length >= 1000) await append(batch.splice(0));
  }
  if (batch.length) await append(batch.splice(0));
  await store.close();
  return dir;
}

/** A log written by the service itself, through its API: total / 10 servers, then PATCHes of their port. */
async function serverLog(): Promise<string> {
  const service = await startService();
  const servers = Math.max(1, Math.floor(total / 10));
  await seed(service.url, servers, (i) => ({ method: 'POST', path: SERVERS, body: newServer(i) }));
  // The genesis events and the creations are in the log already.
  const patches = Math.max(0, total - genesisEvents('0'.repeat(32)).length - servers);
  await seed(service.url, patches, (i) => ({
    method: 'PATCH',
    path: `${SERVERS}/${1 + (i % servers)}`,
    body: { port: 1024 + (i % 60000) },
  }));
  await service.stop();
  const { target: again, seconds } = await startTimed(service.dataDir);
  console.log(`start-up on the server log below (${total} events, its stored read models): ${seconds.toFixed(2)} s`);
  await again.stop();
  return service.dataDir;
}

/** The rebuilt file's rows, table by table, as value arrays. */
function rowsOf(file: string): [string, string[], unknown[][]][] {
  const db = new Database(file, { readonly: true });
  const tables = [
    'entries',
    'tombstones',
    'counters',
    'changes',
    'versions',
    'requests',
    'list_snapshots',
    'log_nodes',
    'meta',
  ];
  const rows = tables.map((table): [string, string[], unknown[][]] => {
    const query = db.prepare(`SELECT * FROM ${table}`).raw();
    return [table, query.columns().map((c) => c.name), query.all() as unknown[][]];
  });
  db.close();
  return rows;
}

/** Rebuilds the read models of the log in `dir`, then writes the same rows with SQLite alone; prints both. */
async function replay(name: string, dir: string): Promise<void> {
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  // As `replay` rebuilds: into a new file in bulk mode, indexes built at the end (and counted).
  const target = new SqliteReadModelStore(join(dir, 'rebuilt.sqlite'), undefined, true);
  const started = performance.now();
  const events = await rebuild(store, target, leafOf);
  target.close();
  await store.close();
  const seconds = (performance.now() - started) / 1000;
  const rate = (s: number) => `${(events / s).toFixed(0)} events/s`;
  console.log(`replay, ${name}: ${events} events in ${seconds.toFixed(2)} s = ${rate(seconds)}`);

  const rebuilt = rowsOf(join(dir, 'rebuilt.sqlite'));
  const floor = new Database(join(dir, 'floor.sqlite'));
  for (const pragma of ['journal_mode = OFF', 'synchronous = OFF', 'cache_size = -262144']) floor.pragma(pragma);
  floor.exec(TABLES);
  const floorStarted = performance.now();
  for (const [table, columns, rows] of rebuilt) {
    const writer = new RowWriter(floor, `INSERT INTO ${table} (${columns.join(', ')})`, columns.length);
    // In transactions of 5,000 rows, as the projector saves.
    for (let from = 0; from < rows.length; from += 5000)
      floor.transaction(() => writer.write(rows.slice(from, from + 5000).flat()))();
  }
  floor.exec(INDEXES);
  const floorSeconds = (performance.now() - floorStarted) / 1000;
  floor.close();
  const rowCount = rebuilt.reduce((n, [, , rows]) => n + rows.length, 0);
  console.log(
    `  anchor: the same ${rowCount} rows and their indexes with SQLite alone: ${floorSeconds.toFixed(2)} s = ${rate(floorSeconds)}; replay / anchor ${(floorSeconds / seconds).toFixed(2)}×`,
  );
}

await replay('tag log (written straight into the store)', await tagLog());
await replay('server log (written through the API: 1 creation in 10 events, then PATCHes)', await serverLog());
