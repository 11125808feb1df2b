// The worker thread of a SaveThread: writes the save jobs it is sent into the read-model file, on a
// connection of its own, and counts them in the shared counters as each one commits.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { CLOSED, FAILING, SAVED } from './save-thread.js';
import { type SaveJob, SaveQueue, Saver } from './saving.js';

const { location, counters } = workerData as { location: string; counters: Int32Array };
const db = new Database(location, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');

const saver = new Saver(db, location);
const queue = new SaveQueue(
  saver,
  (error) => {
    Atomics.store(counters, FAILING, 1);
    Atomics.notify(counters, SAVED);
    parentPort!.postMessage({ failed: { message: error.message, code: (error as { code?: string }).code } });
  },
  () => {
    Atomics.store(counters, FAILING, 0);
    Atomics.add(counters, SAVED, 1);
    Atomics.notify(counters, SAVED);
  },
);

parentPort!.on('message', (message: { job: SaveJob } | { close: true }) => {
  if ('job' in message) return queue.save(message.job);
  queue.close();
  db.close();
  Atomics.store(counters, CLOSED, 1);
  Atomics.notify(counters, CLOSED);
  parentPort!.close();
});
