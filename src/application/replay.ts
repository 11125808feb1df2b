import type { EventStore } from '../event-store/port.js';
import type { ReadModelStore } from '../read-models/port.js';
import { type LeafOf, Projector } from './projector.js';

export interface ReplayReport {
  events: number;
  differences: string[];
}

/**
 * Folds the log into `target` (empty, or a rebuild to go on with): the read models as the log alone
 * makes them, up to the revision `upTo` if given, else to the head.
 */
export async function rebuild(
  store: EventStore,
  target: ReadModelStore,
  leafOf: LeafOf,
  progress?: (n: number) => void,
  upTo?: number,
): Promise<number> {
  let failure: Error | undefined;
  const projector = new Projector(store, target, leafOf, (error) => {
    failure ??= error;
  });
  // A save that fails stops the rebuild (at the next batch of the log, or at the end).
  const stopOnFailure = () => {
    if (failure) throw failure;
  };
  projector.load();
  await projector.catchUp((position) => {
    stopOnFailure();
    progress?.(position);
  }, upTo);
  projector.flush();
  target.settle();
  stopOnFailure();
  return projector.revision + 1;
}

type Line = { table: string; key: string; value: string };

const describe = (line: Line | undefined) => (line ? shorten(line.value) : 'absent');
const shorten = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

/** Orders two lines of one table the way the stores list them: by key, part by part, numbers as numbers. */
function compareKeys(a: string, b: string): number {
  const [x, y] = [a.split('/'), b.split('/')];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const [p, q] = [x[i] ?? '', y[i] ?? ''];
    if (p === q) continue;
    const numeric = /^-?\d+$/.test(p) && /^-?\d+$/.test(q);
    return numeric ? Number(p) - Number(q) : p < q ? -1 : 1;
  }
  return 0;
}

/** Every row that differs between the rebuilt and the stored read models, one line each, read in step. */
export async function compare(rebuilt: ReadModelStore, stored: ReadModelStore): Promise<string[]> {
  const differences: string[] = [];
  // The file's structure first: damage in an index or a page the rows below do not read is found too.
  const damage = stored.integrity();
  if (damage.length > 0) return damage.map((problem) => `the stored file is damaged: ${problem}`);
  const [a, b] = [rebuilt.lines()[Symbol.iterator](), stored.lines()[Symbol.iterator]()];
  try {
    let [x, y] = [a.next().value as Line | undefined, b.next().value as Line | undefined];
    const tables = ['meta', 'counters', 'entries', 'tombstones', 'changes', 'versions', 'requests'];
    const order = (p: Line, q: Line) => tables.indexOf(p.table) - tables.indexOf(q.table) || compareKeys(p.key, q.key);
    while (x || y) {
      const step = !y ? -1 : !x ? 1 : order(x, y);
      const line = (step <= 0 ? x : y)!;
      if (step !== 0 || x!.value !== y!.value) {
        const [was, is] = step < 0 ? [x, undefined] : step > 0 ? [undefined, y] : [x, y];
        differences.push(`${line.table} ${line.key}: rebuilt ${describe(was)}, stored ${describe(is)}`);
      }
      if (step <= 0) x = a.next().value as Line | undefined;
      if (step >= 0) y = b.next().value as Line | undefined;
    }
  } finally {
    // A read that failed half-way leaves the other file's query open, which would keep it from closing.
    a.return?.();
    b.return?.();
  }
  return [...differences, ...(await compareListSnapshots(rebuilt, stored))];
}

/** Keys in order, so that two entries with the same values compare equal whatever order they were built in. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  );

/** Each stored list snapshot must be the list the log gives at its position. */
async function compareListSnapshots(rebuilt: ReadModelStore, stored: ReadModelStore): Promise<string[]> {
  const differences: string[] = [];
  for (const { resource, position, entries } of stored.listSnapshots()) {
    if (canonical(entries) !== canonical(await rebuilt.listAt(resource, position))) {
      differences.push(`list_snapshots ${resource}/${position}: not the list the log gives at that position`);
    }
  }
  return differences;
}

/** `replay`: rebuilds into `fresh` (up to the revision `upTo`, if given) and compares it with the stored read models. */
export async function replay(
  store: EventStore,
  stored: ReadModelStore,
  fresh: ReadModelStore,
  leafOf: LeafOf,
  progress?: (n: number) => void,
  upTo?: number,
): Promise<ReplayReport> {
  const events = await rebuild(store, fresh, leafOf, progress, upTo);
  return { events, differences: await compare(fresh, stored) };
}
