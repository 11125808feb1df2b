// The verifiable log on a log of BENCH_LOG_EVENTS events (default 1,000,000: tag creations and
// updates, one server with its password changed every 100 events), each number beside an anchor
// from the same run:
// - the fold with the tree (leaf bytes, leaf hash, the frontier) beside the same fold without it;
// - inclusion and consistency proofs from the rebuilt read models and the leaves they need, read
//   from the store as the service reads them: p50 and p99 (goal p99 ≤ 5 ms);
// - `verify` reading the whole log beside reading the same rows alone (goal ≥ 100,000 events/s).
// Usage: npm run bench:log   (BENCH_LOG_EVENTS, BENCH_PROOFS: proofs of each kind, default 2,000)

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { rowsOf } from '../projections/changes.js';
import { rebuild } from '../src/application/replay.js';
import { evolve } from '../src/domain/evolve.js';
import { genesisEvents } from '../src/domain/genesis.js';
import type { DomainEvent, LoggedEvent } from '../src/domain/shared/types.js';
import { CONFIG_STREAM } from '../src/domain/shared/types.js';
import { emptyState } from '../src/domain/state.js';
import { consistencyProof, Frontier, inclusionProof, leafHash, rootAt } from '../src/engine/merkle.js';
import { formatVerifier, generateSigner, parseVerifier } from '../src/engine/signed-note.js';
import { logged } from '../src/event-store/port.js';
import { SqliteEventStore } from '../src/event-store/sqlite/store.js';
import { storedTree } from '../src/log/commands/verify.js';
import { leafOf } from '../src/log/index.js';
import { leafText } from '../src/log/leaves.js';
import { withLeaves } from '../src/log/verifiable-log.js';
import { verifyLog } from '../src/log/verify.js';
import { treeReader } from '../src/read-models/sqlite/file-reads.js';
import { SqliteReadModelStore } from '../src/read-models/sqlite/store.js';
import Database from '../src/sqlite/driver.js';
import { percentiles, scratchDir, table } from './lib.js';

const total = Number(process.env.BENCH_LOG_EVENTS ?? 1_000_000);
const proofs = Number(process.env.BENCH_PROOFS ?? 2000);
const BATCH = 5000;

/** The log, appended 1,000 events at a time straight into the store. */
async function writeLog(dir: string): Promise<SqliteEventStore> {
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  let revision = -1;
  const append = async (events: DomainEvent[]) => {
    const records = events.map((e) => ({
      ...e,
      metadata: { actor: 'bench', request_id: randomBytes(8).toString('hex'), at: new Date().toISOString(), schema: 2 },
    }));
    revision = (await store.append(CONFIG_STREAM, records, revision === -1 ? 'no_stream' : revision)).nextRevision;
  };
  await append(genesisEvents('0'.repeat(32)));
  const server = { id_client: 99, id_environment: 1, name: 'db', display_name: 'db', ip: '10.0.0.1', port: 3306 };
  await append([{ type: 'ServerCreated', data: { id: 1, ...server, login: 'pma', passwd: `v1:${'a'.repeat(40)}` } }]);
  const batch: DomainEvent[] = [];
  for (let i = 1; revision + batch.length < total - 1; i++) {
    batch.push({ type: 'TagCreated', data: { id: i, name: `t${i}`, color: '#000000', background: '#FFFFFF' } });
    batch.push({ type: 'TagUpdated', data: { id: i, changes: { color: '#111111' } } });
    if (i % 50 === 0) batch.push({ type: 'ServerUpdated', data: { id: 1, changes: { passwd: `v1:${i}` } } });
    if (batch.length >= 1000) await append(batch.splice(0));
  }
  if (batch.length) await append(batch.splice(0));
  return store;
}

/** Folds `events` (evolve and the change log's rows), with or without the tree; the seconds it took. */
function fold(events: LoggedEvent[], withTree: boolean): number {
  const state = emptyState();
  const tree = new Frontier();
  let highWater = '';
  const started = performance.now();
  for (const event of events) {
    const effects = evolve(state, event);
    if (event.metadata.at > highWater) highWater = event.metadata.at;
    rowsOf(event, effects, highWater);
    if (withTree) tree.append(leafHash(leafText(event)));
  }
  return (performance.now() - started) / 1000;
}

const dir = scratchDir('pmacontrol-log-');
const store = await writeLog(dir);
const size = (await store.head(CONFIG_STREAM)) + 1;
console.log(`node ${process.version}, a log of ${size.toLocaleString('en')} events`);

// The fold, on the first 200,000 events, alternated three times.
const sample = (await store.readStream(CONFIG_STREAM, { maxCount: 200_000 })).map(logged);
const rounds = [0, 1, 2].map(() => [fold(sample, false), fold(sample, true)]);
const [without, withTree] = [0, 1].map((side) => Math.min(...rounds.map((round) => round[side])));
console.log(
  `fold of ${sample.length.toLocaleString('en')} events: ${(sample.length / withTree).toFixed(0)} events/s with the tree, ` +
    `${(sample.length / without).toFixed(0)} without (anchor): ${(without / withTree).toFixed(2)}×`,
);

// The read models with the tree, as `replay` makes them.
const file = join(dir, 'read-models.sqlite');
const target = new SqliteReadModelStore(file, undefined, true);
const rebuildStarted = performance.now();
await rebuild(store, target, leafOf);
target.close();
console.log(`rebuild with the tree: ${(size / ((performance.now() - rebuildStarted) / 1000)).toFixed(0)} events/s`);

const db = new Database(file, { readonly: true });
const random = (n: number) => 1 + Math.floor(Math.random() * n);
/** The time of one answer made from the stored nodes and the leaves it needs, read from the store. */
const time = async (ask: (node: ReturnType<typeof treeReader>) => unknown) => {
  const started = performance.now();
  await withLeaves(store, size, (leaf) => ask(treeReader(db, leaf)));
  return performance.now() - started;
};
/** `count` answers, each asked of sizes drawn before it (a retry that reads leaves asks the same). */
const timed = async <A>(count: number, draw: () => A, ask: (node: ReturnType<typeof treeReader>, a: A) => unknown) => {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const drawn = draw();
    times.push(await time((node) => ask(node, drawn)));
  }
  return times;
};
const inclusion = await timed(
  proofs,
  () => random(size) - 1,
  (node, leaf) => inclusionProof(leaf, size, node),
);
const consistency = await timed(
  proofs,
  () => {
    const to = random(size);
    return [random(to), to];
  },
  (node, [from, to]) => consistencyProof(from, to, node),
);
const root = await timed(
  Math.min(proofs, 200),
  () => random(size),
  (node, at) => rootAt(at, node),
);
table([
  { name: `inclusion proof at ${size.toLocaleString('en')}`, ...percentiles(inclusion), target: 'goal: p99 ≤ 5 ms' },
  { name: 'consistency proof', ...percentiles(consistency), target: 'goal: p99 ≤ 5 ms' },
  { name: 'root at a random size', ...percentiles(root) },
]);
const stored = storedTree(file)!.tree;

// verify, beside reading the same rows alone.
const readStarted = performance.now();
for (let from = 0; ; from += BATCH) {
  const events = await store.readStream(CONFIG_STREAM, { fromRevision: from, maxCount: BATCH });
  if (events.length < BATCH) break;
}
const readSeconds = (performance.now() - readStarted) / 1000;
const key = parseVerifier(formatVerifier(generateSigner('pmacontrol-config/bench')));
const verifyStarted = performance.now();
const result = await verifyLog({
  read: (fromRevision, maxCount) => store.readStream(CONFIG_STREAM, { fromRevision, maxCount }),
  key,
  checkpoints: [],
  stored,
});
const verifySeconds = (performance.now() - verifyStarted) / 1000;
if (!result.findings.every((f) => f.ok))
  throw new Error(`verify failed on its own log: ${JSON.stringify(result.findings)}`);
console.log(
  `verify: ${(size / verifySeconds).toFixed(0)} events/s (goal ≥ 100,000); reading the same rows alone (anchor): ` +
    `${(size / readSeconds).toFixed(0)} events/s; verify / anchor ${(readSeconds / verifySeconds).toFixed(2)}×`,
);
db.close();
await store.close();
