import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { DRIVER_PATH } from './driver.js';

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
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or gone: the next round tries again; the connection's own bound still holds.
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints one SQLite file in WAL mode from a worker thread with its own connection: SQLite's
 * automatic checkpoint runs inside the commit that crosses 1,000 pages, on the event loop, holding
 * every request while it copies and syncs (bench/http.ts, largest event-loop delay at 100,000
 * servers). A PASSIVE checkpoint never waits for, nor blocks, the writer; the connection keeps its
 * own, larger bound (FALLBACK_CHECKPOINT_PAGES).
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private exited = false;

  constructor(file: string, everyMs = EVERY_MS) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { file, driver: DRIVER_PATH, everyMs } });
    // The connection's own bound takes over; said once, on stderr, as a process warning.
    this.worker.on('error', (error) =>
      process.emitWarning(`SQLite checkpoints of ${file} are left to its connection: ${error.message}`, {
        code: 'PMACONTROL_CHECKPOINTER',
      }),
    );
    this.worker.once('exit', () => {
      this.exited = true;
    });
    this.worker.unref();
  }

  /**
   * Asks the worker to close its connection and end, rather than terminating it in the middle of a
   * checkpoint (a native call cut off by terminate() can abort the process); terminated after a
   * second all the same, should it not end.
   */
  async stop(): Promise<void> {
    if (this.exited) return;
    const ended = once(this.worker, 'exit');
    this.worker.postMessage('stop');
    const late = setTimeout(() => void this.worker.terminate(), 1000);
    await ended;
    clearTimeout(late);
  }
}
