import type { HistoryRow } from '../../projections/history.js';
import { type Collection, type EntryMeta, RESOURCES } from '../domain/shared/types.js';
import { emptyState } from '../domain/state.js';
import type { EventStore } from '../event-store/port.js';
import { CONFIG_STREAM, foldInto } from './projector.js';
import { eventDigest } from './checkpoint.js';
import type { EntryChange, ReadModelSnapshot, ReadModelStore } from './read-models.js';

export interface ReplayReport {
  events: number;
  revision: number;
  differences: string[];
}

const BATCH = 1000;

/** Rebuilds every read model from the log alone. */
export async function rebuild(store: EventStore, progress: (events: number) => void = () => {}) {
  const state = emptyState();
  const history: HistoryRow[] = [];
  let revision = -1;
  let digest: string | undefined;
  for (;;) {
    const events = await store.readStream(CONFIG_STREAM, { fromRevision: revision + 1, maxCount: BATCH });
    foldInto(state, events, history, new Map<string, EntryChange>());
    const last = events.at(-1);
    if (last) [revision, digest] = [last.revision, eventDigest(last)];
    progress(revision + 1);
    if (events.length < BATCH) return { snapshot: { state, revision, digest } as ReadModelSnapshot, history };
  }
}

const key = (row: HistoryRow) => `${row.resource}/${row.entry_id}@${row.revision}`;
const canonical = ({ resource, entry_id, revision, position, type, at, actor, request_id, data }: HistoryRow) =>
  JSON.stringify([resource, entry_id, revision, position, type, at, actor, request_id, data]);

/** What differs between a rebuild and the stored read models, one line a difference. */
export function compare(
  rebuilt: { snapshot: ReadModelSnapshot; history: HistoryRow[] },
  stored: { snapshot: ReadModelSnapshot; history: HistoryRow[] },
): string[] {
  const differences: string[] = [];
  if (rebuilt.snapshot.revision !== stored.snapshot.revision) {
    differences.push(`checkpoint: log revision ${rebuilt.snapshot.revision}, stored ${stored.snapshot.revision}`);
  }
  const [keyA, keyB] = [rebuilt.snapshot.state.secretKey, stored.snapshot.state.secretKey].map((k) =>
    JSON.stringify(k),
  );
  if (keyA !== keyB) differences.push(`secret key: rebuilt ${keyA ?? 'none'}, stored ${keyB ?? 'none'}`);
  for (const resource of RESOURCES) {
    const a = rebuilt.snapshot.state[resource] as Collection<EntryMeta>;
    const b = stored.snapshot.state[resource] as Collection<EntryMeta>;
    for (const id of new Set([...a.entries.keys(), ...b.entries.keys()])) {
      const x = JSON.stringify(a.entries.get(id));
      const y = JSON.stringify(b.entries.get(id));
      if (x !== y) differences.push(`${resource}/${id}: rebuilt ${x ?? 'absent'}, stored ${y ?? 'absent'}`);
    }
    const deletedA = [...a.deleted].sort().join(',');
    const deletedB = [...b.deleted].sort().join(',');
    if (deletedA !== deletedB) differences.push(`${resource}: deleted ids rebuilt [${deletedA}], stored [${deletedB}]`);
    if (a.lastId !== b.lastId) differences.push(`${resource}: last id rebuilt ${a.lastId}, stored ${b.lastId}`);
  }
  const storedHistory = new Map(stored.history.map((row) => [key(row), canonical(row)]));
  for (const row of rebuilt.history) {
    const other = storedHistory.get(key(row));
    if (other !== canonical(row)) differences.push(`history ${key(row)}: ${other ? 'differs' : 'missing'}`);
    storedHistory.delete(key(row));
  }
  for (const extra of storedHistory.keys()) differences.push(`history ${extra}: stored but not in the log`);
  return differences;
}

/** `npm run replay`: rebuild, compare, and with `apply` replace the stored read models. */
export async function replay(
  store: EventStore,
  readModels: ReadModelStore,
  options: { apply: boolean; progress?: (n: number) => void },
): Promise<ReplayReport> {
  const rebuilt = await rebuild(store, options.progress);
  const differences = compare(rebuilt, readModels.dump());
  if (options.apply && differences.length > 0) readModels.replace(rebuilt.snapshot, rebuilt.history);
  return { events: rebuilt.snapshot.revision + 1, revision: rebuilt.snapshot.revision, differences };
}
