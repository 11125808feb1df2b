// The worker thread of SqliteReadModelStore.integrity: the file's own integrity check, on a read-only
// connection of its own, while the thread that asked for it goes on (a rebuild, in `replay`).
import { parentPort, workerData } from 'node:worker_threads';
import Database from '../../sqlite/driver.js';
import { integrity } from './layout.js';

const { location } = workerData as { location: string };
let found: string[];
try {
  const db = new Database(location, { readonly: true, fileMustExist: true });
  try {
    found = integrity(db);
  } finally {
    db.close();
  }
} catch (error) {
  found = [(error as Error).message];
}
parentPort!.postMessage(found);
