// Replay speed: rebuild every read model from a SQLite log of BENCH_EVENTS events.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_STREAM } from '../src/application/projector.js';
import { rebuild } from '../src/application/replay.js';
import { genesisEvents } from '../src/domain/genesis.js';
import { entryStream, resourceOfEvent } from '../src/domain/state.js';
import { SqliteEventStore } from '../src/event-store/sqlite/store.js';

const total = Number(process.env.BENCH_EVENTS ?? 50_000);
const file = join(mkdtempSync(join(tmpdir(), 'pmacontrol-replay-')), 'events.sqlite');
const store = new SqliteEventStore(file);
const metadata = (type: string, id?: number) => {
  const resource = resourceOfEvent(type);
  return {
    actor: 'bench',
    request_id: randomBytes(8).toString('hex'),
    at: new Date().toISOString(),
    ...(resource && id !== undefined ? { entry: entryStream(resource, id) } : {}),
  };
};

let revision = -1;
const append = async (events: { type: string; data: object }[]) => {
  const result = await store.append(
    CONFIG_STREAM,
    events.map((e) => ({ ...e, metadata: metadata(e.type, (e.data as { id?: number }).id) })),
    revision === -1 ? 'no_stream' : revision,
  );
  revision = result.nextRevision;
};
await append(genesisEvents('0'.repeat(32)));
const batch: { type: string; data: { id: number } & Record<string, unknown> }[] = [];
for (let i = 1; revision + batch.length < total - 1; i++) {
  batch.push({ type: 'TagCreated', data: { id: i, name: `t${i}`, color: '#000000', background: '#FFFFFF' } });
  batch.push({ type: 'TagUpdated', data: { id: i, changes: { color: '#111111' } } });
  if (batch.length >= 1000) await append(batch.splice(0));
}
if (batch.length) await append(batch.splice(0));

const started = performance.now();
const rebuilt = await rebuild(store);
const seconds = (performance.now() - started) / 1000;
console.log(
  `replay: ${rebuilt.snapshot.revision + 1} events in ${seconds.toFixed(2)} s = ${((rebuilt.snapshot.revision + 1) / seconds).toFixed(0)} events/s (history rows ${rebuilt.history.length})`,
);
await store.close();
