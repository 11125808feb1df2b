import { join } from 'node:path';
import type { Logger } from 'pino';
import type { RepairEvent } from './application/service.js';
import type { Config } from './config.js';
import { InstanceLock, prepareDataDir } from './data-dir.js';
import type { EventStore, LogReader } from './event-store/port.js';
import { SqliteEventStore, sqliteLogReader } from './event-store/sqlite/store.js';
import type { ReadModelStore } from './read-models/port.js';
import { isDamage, moveFile, REBUILT, REBUILT_WAITING, removeFile } from './read-models/sqlite/damage.js';
import { SqliteReadModelStore } from './read-models/sqlite/store.js';

/**
 * The composition root's choice of stores (with main.ts, the only modules that import an adapter):
 * the event store the configuration names, the read models beside it in DATA_DIR, and where a
 * rebuild of them goes.
 */

export interface Stores {
  store: EventStore;
  readModels: ReadModelStore;
  /** This process's hold on DATA_DIR (see InstanceLock), released by `close`. */
  lock: InstanceLock;
  /** DATA_DIR's probe file synced: awaited once the read models are loaded (see prepareDataDir). */
  synced: Promise<void>;
  /**
   * Where a rebuild of the read models goes (`replay`), and how it replaces them (`--apply`): in
   * their place (no instance running), or beside them for the serving instance to take in (`offer`).
   * `open` gives the file a rebuild that stopped before its end left, if any (see runReplay);
   * `isDamage` tells an error that says that file is damaged.
   */
  rebuild: { open(): ReadModelStore; adopt(): void; offer(): void; discard(): void; isDamage(error: unknown): boolean };
}

/** The file of this DATA_DIR's read models for the configured store (one per store kind). */
export const readModelsFile = (config: Config): string =>
  join(
    config.dataDir,
    config.eventStore === 'sqlite' ? 'read-models.sqlite' : `read-models-${config.eventStore}.sqlite`,
  );

/** The stores of the configuration; `hold`: how this process holds DATA_DIR (shared, or alone for replay --apply). */
export async function openStores(config: Config, logger: Logger, hold: 'shared' | 'alone' = 'shared'): Promise<Stores> {
  const synced = prepareDataDir(config.dataDir);
  let lock: InstanceLock;
  try {
    lock = hold === 'alone' ? InstanceLock.exclusive(config.dataDir) : InstanceLock.shared(config.dataDir);
  } catch (error) {
    await synced.catch(() => {});
    throw error;
  }
  const file = readModelsFile(config);
  const setAside = (setAsideAs: string, reason: string) =>
    logger.warn(
      { file, set_aside_as: setAsideAs, reason },
      'read models corrupt or unreadable: set aside, rebuilding them from the log',
    );
  const fresh = `${file}.rebuild`;
  let store: EventStore;
  let readModels: ReadModelStore;
  try {
    store = await openEventStore(config);
    readModels = new SqliteReadModelStore(file, setAside);
  } catch (error) {
    lock.release();
    await synced.catch(() => {}); // the probe file is removed before the error ends the process
    throw error;
  }
  return {
    store,
    readModels,
    lock,
    synced,
    rebuild: {
      // A rebuild's file that cannot be read is of no use: removed, and a new one made.
      open: () => new SqliteReadModelStore(fresh, (setAsideAs) => removeFile(setAsideAs), true),
      adopt: () => moveFile(fresh, file),
      offer: () => moveFile(fresh, file + REBUILT),
      discard: () => removeFile(fresh),
      isDamage,
    },
  };
}

/**
 * The configured event store. The EventStoreDB and MariaDB adapters (and their clients, a quarter of
 * a second to load) are imported only when configured: the embedded store starts without them.
 */
export async function openEventStore(config: Config): Promise<EventStore> {
  if (config.eventStore === 'eventstoredb') {
    const { EsdbEventStore } = await import('./event-store/esdb/store.js');
    return new EsdbEventStore(config.eventStoreConnectionString!);
  }
  if (config.eventStore === 'mariadb') {
    const { MariadbEventStore } = await import('./event-store/mariadb/store.js');
    const { pollMaxMs, ...settings } = config.mariadb!;
    return new MariadbEventStore({ ...settings, poll: { minMs: 20, maxMs: pollMaxMs } });
  }
  return new SqliteEventStore(join(config.dataDir, 'events.sqlite'), { pollMs: config.pollMs });
}

/**
 * The store `copy-log --to` names: a SQLite file (`sqlite:<file>`) or a MariaDB/MySQL database, and
 * how to name it in messages (never with a password); undefined for anything else.
 */
export async function openTargetStore(target: string): Promise<{ store: EventStore; shown: string } | undefined> {
  if (/^(mysql|mariadb):\/\//.test(target)) {
    const { MariadbEventStore, redactUrl } = await import('./event-store/mariadb/store.js');
    return { store: new MariadbEventStore({ url: target }), shown: redactUrl(target) };
  }
  if (target.startsWith('sqlite:'))
    return { store: new SqliteEventStore(target.slice('sqlite:'.length)), shown: target };
  return undefined;
}

/**
 * The log of a store read without writing (verify, backup): `target` names a copy (`sqlite:<file>`,
 * or `mysql://…/database`), else the configured store is read. Undefined for a target it cannot name.
 */
export async function openLogReader(config: Config, target?: string): Promise<LogReader | undefined> {
  if (target !== undefined) {
    if (/^(mysql|mariadb):\/\//.test(target)) {
      const { mariadbLogReader } = await import('./event-store/mariadb/store.js');
      return mariadbLogReader(target);
    }
    return target.startsWith('sqlite:') ? sqliteLogReader(target.slice('sqlite:'.length)) : undefined;
  }
  if (config.eventStore === 'sqlite') return sqliteLogReader(join(config.dataDir, 'events.sqlite'));
  if (config.eventStore === 'mariadb') {
    const { mariadbLogReader } = await import('./event-store/mariadb/store.js');
    return mariadbLogReader(config.mariadb!.url);
  }
  // EventStoreDB: the store's own reads, which write nothing.
  const store = await openEventStore(config);
  return {
    name: 'eventstoredb',
    read: (after, maxCount) => store.readAll({ after, maxCount }),
    close: () => store.close(),
  };
}

/** Logs the start-up catch-up: its first batch, then every 10,000 events. */
export function progressLog(logger: Logger): (position: number) => void {
  let logged = -Infinity;
  return (position) => {
    if (position - logged < 10_000) return;
    logged = position;
    logger.info({ position }, 'projecting the log');
  };
}

/** Logs what happens to damaged read models, or to a rebuild taken in: set aside, rebuilt. */
export function repairLog(logger: Logger, file: string): (event: RepairEvent) => void {
  return (event) => {
    if (event.step === 'started' && event.reason === REBUILT_WAITING)
      logger.info(
        { file },
        'a rebuild of the read models (replay --apply) taken in: catching it up with the log (not ready meanwhile)',
      );
    else if (event.step === 'started') {
      const { reason, setAsideAs } = event;
      logger.warn(
        { file, set_aside_as: setAsideAs, reason },
        'read models damaged: set aside, rebuilding them from the log (not ready meanwhile)',
      );
    } else logger.info({ events: event.events, ms: event.ms }, 'read models rebuilt from the log');
  };
}
