// Replay speed: rebuild every read model from a SQLite log of BENCH_EVENTS events.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { CONFIG_STREAM } from '../src/application/projector.js';
import { rebuild } from '../src/application/replay.js';
import { genesisEvents } from '../src/domain/genesis.js';
import type { DomainEvent } from '../src/domain/shared/types.js';
import { SqliteEventStore } from '../src/event-store/sqlite/store.js';
import { SqliteReadModelStore } from '../src/read-models/sqlite/store.js';
import { scratchDir } from './lib.js';

const total = Number(process.env.BENCH_EVENTS ?? 50_000);
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

// As `replay` rebuilds: into a new file in bulk mode, indexes built at the end (and counted).
const target = new SqliteReadModelStore(join(dir, 'read-models.sqlite'), undefined, true);
const started = performance.now();
const events = await rebuild(store, target);
target.close();
const seconds = (performance.now() - started) / 1000;
console.log(`replay: ${events} events in ${seconds.toFixed(2)} s = ${(events / seconds).toFixed(0)} events/s`);
await store.close();
