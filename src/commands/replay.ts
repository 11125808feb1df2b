import { writeSync } from 'node:fs';
import { Projector } from '../application/projector.js';
import { assertLogHolds } from '../application/read-model-origin.js';
import { compare, type ReplayReport, rebuild } from '../application/replay.js';
import { StartRefused } from '../application/start-refused.js';
import { type Config, loadConfig } from '../config.js';
import { assertServes, InstanceLock } from '../data-dir.js';
import { CONFIG_STREAM } from '../domain/shared/types.js';
import { leafOf } from '../log/index.js';
import { createLogger, openStores, type Stores } from '../main.js';
import type { ReadModelStore } from '../read-models/port.js';
import { UsageError } from './catalog.js';

/**
 * `replay [--apply]`: rebuilds the read models from the log beside the stored ones and compares.
 * `--apply` replaces them: in place when nothing else uses DATA_DIR, or, beside a serving instance,
 * as a finished file that instance takes in (without comparing: the stored file moves meanwhile).
 * One rebuild at a time; one that was stopped (kill -9 included) is resumed by the next.
 */
export async function runReplay(args: string[]): Promise<number> {
  if (args.some((arg) => arg !== '--apply')) throw new UsageError(`replay takes --apply only, not ${args.join(' ')}`);
  const apply = args.includes('--apply');
  const config = loadConfig();
  assertServes(config);
  // Held until the process ends: the rebuild's file is this process's until it is taken in or removed.
  InstanceLock.rebuilding(config.dataDir);
  const { stores, beside } = await openFor(config, apply);
  return discardingDamage(stores, () => (beside ? offer(stores) : compareAndApply(stores, apply)));
}

/**
 * Runs a rebuild. Its file, written unsynced, may not come whole through a power cut: one found
 * damaged on the way is removed, so that the next replay starts over instead of resuming it.
 */
async function discardingDamage<T>(stores: Stores, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!stores.rebuild.isDamage(error)) throw error;
    stores.rebuild.discard();
    throw new Error(
      `the rebuild's file is damaged (${(error as Error).message}): removed, the next replay starts over`,
    );
  }
}

/** The stores, held alone for `--apply` when no one else uses DATA_DIR, else beside the others. */
async function openFor(config: Config, apply: boolean): Promise<{ stores: Stores; beside: boolean }> {
  const logger = createLogger(config.logLevel);
  if (!apply) return { stores: await openStores(config, logger, 'shared'), beside: false };
  try {
    return { stores: await openStores(config, logger, 'alone'), beside: false };
  } catch (error) {
    if (!(error instanceof StartRefused)) throw error;
    return { stores: await openStores(config, logger, 'shared'), beside: true };
  }
}

/**
 * A line on stderr, written at once: the command may run in a thread of its own (src/cli.ts), whose
 * stream would hold its lines until the fold lets its event loop turn.
 */
const say = (line: string) => writeSync(2, `${line}\n`);

/** Prints "replayed N events" on stderr every 10,000 events. */
function progress(): (events: number) => void {
  let shown = 0;
  return (events) => {
    if (events - shown < 10_000) return;
    shown = events;
    say(`replayed ${events} events`);
  };
}

/**
 * The rebuild's file, once this process holds the rebuild lock: the one a rebuild that stopped
 * before its end left (killed, or its log unreadable), resumed from its last consistent point when
 * the log holds the event it reached there; otherwise a new one.
 */
async function openRebuild(stores: Stores): Promise<ReadModelStore> {
  const fresh = stores.rebuild.open();
  const { state, digest } = fresh.load();
  if (state.revision < 0) return fresh;
  const startOver = (why: string) => {
    say(`${why}: starting over`);
    fresh.close();
    stores.rebuild.discard();
    return stores.rebuild.open();
  };
  try {
    await assertLogHolds(stores.store, CONFIG_STREAM, { revision: state.revision, digest }, 'the rebuild left');
  } catch (error) {
    if (!(error instanceof StartRefused)) throw error;
    return startOver('a rebuild left a file the log does not match');
  }
  say(`resuming the rebuild a replay left at event ${state.revision + 1}`);
  return fresh;
}

/**
 * The stored read models folded up to `head` as a start would fold them (read models merely behind
 * the log — a stop that saved all but its last batch, a kill -9 — are not different).
 */
async function foldStoredUp(stores: Stores, head: number): Promise<void> {
  const { store, readModels } = stores;
  const projector = new Projector(store, readModels, leafOf);
  projector.load();
  await projector.catchUp(undefined, head);
  projector.flush();
  readModels.settle();
}

/**
 * The rebuild up to `head` (the log's head when undefined) and its comparison with the stored read
 * models. Their integrity is checked on a thread of its own while the rebuild runs (it took 5–8 s of
 * `replay` on a 2,000,000-event history, bench/history.ts); a damaged file is left as it is, for the
 * comparison to report; a whole one is folded up to `head` first, when one is given.
 */
async function rebuildAndCompare(stores: Stores, fresh: ReadModelStore, head?: number): Promise<ReplayReport> {
  const { store, readModels } = stores;
  const checked = readModels.integrity();
  let events: number;
  try {
    events = await rebuild(store, fresh, leafOf, progress(), head);
  } finally {
    await checked.catch(() => []); // the check's thread ends before the stores close
  }
  const damage = await checked;
  if (head !== undefined && damage.length === 0) await foldStoredUp(stores, head);
  return { events, differences: await compare(fresh, readModels, damage) };
}

/**
 * Rebuilds the log beside the stored read models and compares them row by row, both at the same head
 * (without --apply, the stored ones are folded up to it first); with --apply and differences, puts
 * the rebuilt file in place of the stored one.
 */
async function compareAndApply(stores: Stores, apply: boolean): Promise<number> {
  const { store, readModels, rebuild: rebuilt, synced } = stores;
  await synced;
  let report: ReplayReport | undefined;
  let fresh: ReadModelStore | undefined;
  try {
    // The check compares at the head it finds now, the stored read models folded up to it; --apply
    // replaces them when they differ from the rebuild, being behind included (the rebuild, in bulk,
    // is the faster way up to the head).
    const head = apply ? undefined : await store.head(CONFIG_STREAM);
    fresh = await openRebuild(stores);
    report = await rebuildAndCompare(stores, fresh, head);
  } finally {
    await store.close();
    readModels.close();
    // Kept (its indexes built) when it replaces the stored file, or when a failure leaves it to resume.
    fresh?.close(report !== undefined && (report.differences.length === 0 || !apply));
    stores.lock.release();
  }
  console.log(`replayed ${report.events} events`);
  for (const line of report.differences.slice(0, 100)) console.log(`  ${line}`);
  if (report.differences.length > 100) console.log(`  … and ${report.differences.length - 100} more`);
  if (report.differences.length === 0) {
    rebuilt.discard();
    console.log('read models match the log');
    return 0;
  }
  if (!apply) {
    rebuilt.discard();
    console.log(`${report.differences.length} differences; run with --apply to replace the read models`);
    return 1;
  }
  rebuilt.adopt();
  console.log(`replaced the read models (${report.differences.length} differences)`);
  return 0;
}

/** Beside a serving instance: the rebuilt file is left for it, renamed whole once closed. */
async function offer(stores: Stores): Promise<number> {
  const { store, readModels, rebuild: rebuilt, synced } = stores;
  await synced;
  readModels.close();
  const fresh = await openRebuild(stores);
  let events: number;
  try {
    events = await rebuild(store, fresh, leafOf, progress());
  } finally {
    await store.close();
    fresh.close();
    stores.lock.release();
  }
  rebuilt.offer();
  console.log(`replayed ${events} events`);
  console.log(
    'an instance is serving this DATA_DIR: it takes the rebuilt read models in at its next change-log question ' +
      '(or its next start) and catches them up with the log',
  );
  return 0;
}
