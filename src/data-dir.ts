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

/**
 * What `store.json` holds: the store served, the stores its log moved from (never served again from
 * this directory), and the store a `copy-log` has copied it to, whose first start makes the move.
 */
interface StoreFile extends StoreRecord {
  moved_from?: (StoreRecord & { at: string })[];
  moving_to?: StoreRecord;
}

/** Two records name the same store (an older record may not say where). */
const same = (a: StoreRecord, b: StoreRecord) =>
  a.event_store === b.event_store && (a.location === '' || b.location === '' || a.location === b.location);

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

/**
 * The store a `copy-log --to` target is, as a start could serve it: a MariaDB/MySQL URL, or this
 * directory's own events.sqlite; undefined for a file elsewhere (a copy, not a move).
 */
export function storeAt(target: string, dataDir: string): StoreRecord | undefined {
  if (/^(mysql|mariadb):\/\//.test(target)) {
    const url = new URL(target.replace(/^mariadb:/, 'mysql:'));
    return { event_store: 'mariadb', location: `${url.hostname}:${url.port || 3306}${url.pathname}` };
  }
  const file = target.startsWith('sqlite:') ? resolve(target.slice('sqlite:'.length)) : undefined;
  return file === resolve(dataDir, 'events.sqlite') ? { event_store: 'sqlite', location: 'events.sqlite' } : undefined;
}

const describe = (store: StoreRecord) =>
  store.event_store === 'sqlite' ? 'the embedded SQLite store' : `${store.event_store} at ${store.location}`;

/**
 * What a data directory serves: its record, or what an older one's files show (the record came
 * later). Undefined: it holds no store.
 */
function recordedStore(dir: string): StoreFile | undefined {
  const file = join(dir, STORE_FILE);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as StoreFile;
  if (existsSync(join(dir, 'events.sqlite'))) return { event_store: 'sqlite', location: 'events.sqlite' };
  for (const store of ['mariadb', 'eventstoredb'] as const) {
    if (existsSync(join(dir, `read-models-${store}.sqlite`))) return { event_store: store, location: '' };
  }
  return undefined;
}

function writeRecord(dir: string, record: StoreFile): void {
  const file = join(dir, STORE_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/**
 * One log, never two: `serve` refuses a DATA_DIR whose log is in another store than the one the
 * configuration names — one its log moved away from (a forgotten EVENT_STORE would serve a stale log
 * and take writes there), or one it was never copied to. The first start on the store `copy-log`
 * copied the log to is the move itself.
 */
export function assertMayServe(config: Config): void {
  const known = recordedStore(config.dataDir);
  const wanted = storeOf(config);
  if (!known || same(known, wanted) || (known.moving_to && same(known.moving_to, wanted))) return;
  const dir = resolve(config.dataDir);
  const moved = known.moved_from?.find((store) => same(store, wanted));
  if (moved) {
    throw new StartRefused(
      `DATA_DIR ${dir}'s log moved from ${describe(wanted)} to ${describe(known)} on ${moved.at}: ` +
        `${describe(wanted)} holds an old copy of it, which is never served again from here. Start with the ` +
        'configuration of the store it moved to (EVENT_STORE and its settings)',
    );
  }
  throw new StartRefused(
    `DATA_DIR ${dir} serves ${describe(known)}, but EVENT_STORE=${config.eventStore} names ${describe(wanted)}: ` +
      'start with the configuration of the service that uses this directory, or move the log there first (copy-log)',
  );
}

/** `serve` records the store it serves; on the first start after a `copy-log`, the move is recorded with it. */
export function recordStore(config: Config): void {
  const store = storeOf(config);
  const known = recordedStore(config.dataDir);
  if (known && same(known, store) && existsSync(join(config.dataDir, STORE_FILE)) && !known.moving_to) return;
  if (known && same(known, store)) {
    const { moving_to: _done, ...kept } = known;
    writeRecord(config.dataDir, { ...kept, ...store });
    return;
  }
  const movedFrom = known
    ? [
        ...(known.moved_from ?? []),
        { event_store: known.event_store, location: known.location, at: new Date().toISOString() },
      ]
    : [];
  writeRecord(config.dataDir, { ...store, ...(movedFrom.length > 0 ? { moved_from: movedFrom } : {}) });
}

/** `copy-log` has copied the log into `target`: its first start there is the move (see assertMayServe). */
export function recordMoveTo(dataDir: string, target: StoreRecord): void {
  const known = recordedStore(dataDir);
  if (!known || same(known, target)) return;
  writeRecord(dataDir, { ...known, moving_to: target });
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
  if (!same(known, wanted)) {
    const moved = known.moved_from?.some((store) => same(store, wanted));
    throw new StartRefused(
      `DATA_DIR ${dir} serves ${describe(known)}, but EVENT_STORE=${config.eventStore} names ${describe(wanted)}` +
        `${moved ? ', which its log moved away from' : ''}: ` +
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
