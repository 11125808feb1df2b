// The worker thread of a SaveThread: writes the save jobs it is sent into the read-model file, on a
// connection of its own, and counts them in the shared counters as each one commits.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import Database from '../../sqlite/driver.js';
import type { SaveJob } from './save-jobs.js';
import { CLOSED, FAILING, SAVED } from './save-thread.js';
import { SaveQueue, Saver } from './saving.js';
import { INDEXES } from './schema.js';

const { location, counters, bulk, failures, holdMs } = workerData as {
  location: string;
  counters: Int32Array;
  bulk: boolean;
  failures: MessagePort;
  holdMs: number;
};
const db = new Database(location, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
// As the main thread's connection has it (SqliteReadModelStore.open).
if (bulk) {
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
} else db.pragma('synchronous = NORMAL');

// A file filled in bulk copies its list snapshots at once: nothing reads it meanwhile.
const saver = new Saver(db, bulk ? undefined : location, bulk);
const queue = new SaveQueue(
  saver,
  (error) => {
    // The message first: a wait woken by the flag takes it at once.
    failures.postMessage({ message: error.message, code: (error as { code?: string }).code });
    Atomics.store(counters, FAILING, 1);
    Atomics.notify(counters, SAVED);
  },
  (count) => {
    Atomics.store(counters, FAILING, 0);
    Atomics.add(counters, SAVED, count);
    Atomics.notify(counters, SAVED);
  },
  holdMs,
);

// However the thread ends (asked to, or by an error), a main thread waiting on it is woken.
process.on('exit', () => {
  Atomics.store(counters, CLOSED, 1);
  Atomics.notify(counters, CLOSED);
  Atomics.notify(counters, SAVED);
});

parentPort!.on('message', (message: { job: SaveJob } | { hurry: true } | { close: true; indexes: boolean }) => {
  if ('job' in message) return queue.save(message.job);
  if ('hurry' in message) return queue.hurry();
  queue.close();
  // A file filled in bulk gets its indexes here, where its pages are in the cache (the main thread's
  // close finds them made); not in a file thrown away next.
  if (bulk && message.indexes) db.exec(INDEXES);
  db.close();
  parentPort!.close();
});
