import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker moves the write-ahead log into the database file. */
const EVERY_MS = 200;
/**
 * The connection's own automatic checkpoint, kept as a bound should the worker fall behind: 10,000
 * pages (40 MiB) instead of SQLite's 1,000.
 */
export const FALLBACK_CHECKPOINT_PAGES = 10_000;

/**
 * The worker's code. It is given as text (a CommonJS eval worker) so that the same code runs under
 * the compiled build and under tsx in the tests; the driver's path comes from the main thread.
 */
const WORKER = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or gone: the next round tries again; the connection's own bound still holds.
  }
}, workerData.everyMs);
`;

const driver = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * Checkpoints one SQLite file in WAL mode from a worker thread with its own connection. SQLite's
 * automatic checkpoint runs inside the commit that crosses 1,000 pages, on the event loop: at
 * 100,000 servers it copied about 4 MiB of scattered pages into the read models and synced them,
 * holding every request for 40 to 60 ms. A PASSIVE checkpoint never waits for, nor blocks, the
 * writer; the connection keeps its own, larger bound (FALLBACK_CHECKPOINT_PAGES).
 */
export class Checkpointer {
  private readonly worker: Worker;

  constructor(file: string, everyMs = EVERY_MS) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { file, driver, everyMs } });
    // The connection's own bound takes over; said once, on stderr, as a process warning.
    this.worker.on('error', (error) =>
      process.emitWarning(`SQLite checkpoints of ${file} are left to its connection: ${error.message}`, {
        code: 'PMACONTROL_CHECKPOINTER',
      }),
    );
    this.worker.unref();
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
