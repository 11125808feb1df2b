import {
  closeSync,
  existsSync,
  fsync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { StartRefused } from './application/start-refused.js';
import type { Config } from './config.js';
import Database from './sqlite/driver.js';

/** The file that says which event store a data directory serves. */
export const STORE_FILE = 'store.json';

/** Which event store a data directory serves: its kind and where it is (never a password). */
export interface StoreRecord {
  event_store: Config['eventStore'];
  location: string;
}

/** The store the configuration names, as a data directory records it. */
export function storeOf(config: Config): StoreRecord {
  if (config.eventStore === 'sqlite') return { event_store: 'sqlite', location: 'events.sqlite' };
  if (config.eventStore === 'mariadb') {
    const url = new URL(config.mariadb!.url.replace(/^mariadb:/, 'mysql:'));
    return { event_store: 'mariadb', location: `${url.hostname}:${url.port || 3306}${url.pathname}` };
  }
  const hosts = config.eventStoreConnectionString!.replace(/^[a-z+]+:\/\/([^@/]*@)?/, '').split(/[/?]/)[0];
  return { event_store: 'eventstoredb', location: hosts };
}

const describe = (store: StoreRecord) =>
  store.event_store === 'sqlite' ? 'the embedded SQLite store' : `${store.event_store} at ${store.location}`;

/**
 * What a data directory serves: its record, or what an older one's files show (the record came
 * later). Undefined: it holds no store.
 */
function recordedStore(dir: string): StoreRecord | undefined {
  const file = join(dir, STORE_FILE);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as StoreRecord;
  if (existsSync(join(dir, 'events.sqlite'))) return { event_store: 'sqlite', location: 'events.sqlite' };
  for (const store of ['mariadb', 'eventstoredb'] as const) {
    if (existsSync(join(dir, `read-models-${store}.sqlite`))) return { event_store: store, location: '' };
  }
  return undefined;
}

/** `serve` records the store it serves (a directory may move to another store: the migration path). */
export function recordStore(config: Config): void {
  const store = storeOf(config);
  const known = recordedStore(config.dataDir);
  if (known && known.event_store === store.event_store && known.location === store.location) return;
  const file = join(config.dataDir, STORE_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(store, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/**
 * Every command but `serve` works on a data directory a service has used, and on the store it
 * serves: never one that does not exist, holds no store, or belongs to another store (a command
 * would otherwise start a new, empty log there, or read the wrong one).
 */
export function assertServes(config: Config): void {
  const dir = resolve(config.dataDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new StartRefused(`DATA_DIR ${dir} does not exist: set DATA_DIR to the directory the service uses`);
  }
  const known = recordedStore(dir);
  if (!known) {
    throw new StartRefused(
      `DATA_DIR ${dir} holds no store: set DATA_DIR to the directory the service uses (start the service once to make one)`,
    );
  }
  const wanted = storeOf(config);
  const sameLocation = known.location === '' || known.location === wanted.location;
  if (known.event_store !== wanted.event_store || !sameLocation) {
    throw new StartRefused(
      `DATA_DIR ${dir} serves ${describe(known)}, but EVENT_STORE=${config.eventStore} names ${describe(wanted)}: ` +
        'run the command with the configuration of the service that uses this directory',
    );
  }
}

/**
 * Who is using a data directory, by a lock on DATA_DIR/instance.lock (an operating-system lock,
 * released when its process ends, even by kill -9): every instance and command that opens the
 * service holds it shared; `replay --apply`, which replaces the read models in place, holds it
 * alone, and when anyone else holds it rebuilds beside them instead (the serving instance takes the
 * rebuilt file in itself).
 */
export class InstanceLock {
  private constructor(private readonly db: BetterSqlite3.Database) {}

  /**
   * Opens DATA_DIR/`name` and takes its lock with `take`; `refusal` when another process holds it
   * in a way that excludes this one (SQLITE_BUSY: at the first read, or at `take`).
   */
  private static hold(
    dir: string,
    name: string,
    take: (db: BetterSqlite3.Database) => void,
    refusal: string,
  ): InstanceLock {
    const db = new Database(join(dir, name));
    try {
      db.pragma('busy_timeout = 0');
      db.exec('CREATE TABLE IF NOT EXISTS holders (note TEXT)');
      take(db);
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      throw new StartRefused(refusal);
    }
    return new InstanceLock(db);
  }

  /** For a serving instance or a command: refused while `replay --apply` runs. */
  static shared(dir: string): InstanceLock {
    return InstanceLock.hold(
      dir,
      'instance.lock',
      (db) => {
        db.exec('BEGIN');
        db.prepare('SELECT count(*) FROM holders').get();
      },
      `a replay --apply is replacing the read models of DATA_DIR ${resolve(dir)}: wait for it`,
    );
  }

  /** For `replay --apply` in place: refused while an instance or a command uses the directory. */
  static exclusive(dir: string): InstanceLock {
    return InstanceLock.hold(
      dir,
      'instance.lock',
      (db) => db.exec('BEGIN EXCLUSIVE'),
      `an instance of the service (or a command) is using DATA_DIR ${resolve(dir)}: stop it before replay --apply`,
    );
  }

  /**
   * For a rebuild of the read models (`replay`), on DATA_DIR/rebuild.lock: one at a time, since a
   * rebuild goes on from the file another one left.
   */
  static rebuilding(dir: string): InstanceLock {
    return InstanceLock.hold(
      dir,
      'rebuild.lock',
      (db) => db.exec('BEGIN EXCLUSIVE'),
      `a replay is rebuilding the read models of DATA_DIR ${resolve(dir)}: wait for it`,
    );
  }

  release(): void {
    if (!this.db.open) return;
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.db.close();
  }
}

/**
 * Makes sure DATA_DIR is a directory this process can write and sync a file in, creating it if
 * needed; refuses at once with a message that names it otherwise. (Node's recursive mkdir loops
 * forever under /proc, so each missing level is made on its own.) The sync is what the returned
 * promise waits for, refused alike when it fails: it waits for whatever the file system has to write
 * before it, so it runs while the read models load rather than before (bench/http.ts, start-up).
 */
export function prepareDataDir(dir: string): Promise<void> {
  const path = resolve(dir);
  const refuse = (why: string) => new StartRefused(`DATA_DIR ${path} cannot hold the data: ${why}`);
  const missing: string[] = [];
  for (let at = path; !existsSync(at); at = dirname(at)) missing.unshift(at);
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      throw refuse(`creating ${level} failed (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  if (!statSync(path).isDirectory()) throw refuse('it is not a directory');
  const probe = join(path, `.write-probe-${process.pid}`);
  const failed = (error: unknown) => refuse(`writing a file there failed (${(error as NodeJS.ErrnoException).code})`);
  /** Closes (when open) and removes the probe; the first error of the two, if any. */
  const removeProbe = (descriptor?: number): NodeJS.ErrnoException | undefined => {
    try {
      if (descriptor !== undefined) closeSync(descriptor);
      unlinkSync(probe);
    } catch (error) {
      return error as NodeJS.ErrnoException;
    }
  };
  let fd: number | undefined;
  try {
    fd = openSync(probe, 'w');
    writeSync(fd, 'probe');
  } catch (error) {
    if (fd !== undefined) removeProbe(fd);
    throw failed(error);
  }
  const opened = fd;
  const synced = new Promise<void>((resolve, reject) =>
    fsync(opened, (error) => {
      const cleanup = removeProbe(opened);
      const failure = error ?? cleanup;
      if (failure) reject(failed(failure));
      else resolve();
    }),
  );
  // Awaited later: a start that fails first does not also report this as unhandled.
  synced.catch(() => {});
  return synced;
}
