// SQLite's write-ahead logs are moved into their database files by a worker thread, not by the
// commit that crosses 1,000 pages on the event loop (which held requests 40-60 ms at 100,000
// servers). Seen from outside: a log written in steps stays short, although the connection's own
// automatic checkpoint only starts at 10,000 pages.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import Database from '../../src/sqlite/driver.js';
import { FALLBACK_CHECKPOINT_PAGES, WalCheckpointer } from '../../src/sqlite/wal-checkpointer.js';

const MiB = 1024 * 1024;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const walSize = (file: string) => statSync(`${file}-wal`).size;

/** 24 steps of 0.5 MiB (12 MiB in all, 3,000 pages), a pause after each. */
async function writeInSteps(write: (blob: Buffer) => void | Promise<void>) {
  for (let step = 0; step < 24; step++) {
    await write(randomBytes(MiB / 2));
    await pause(120);
  }
}

function database(dir: string) {
  const file = join(dir, 'db.sqlite');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
  db.exec('CREATE TABLE blobs (data BLOB)');
  return { file, db, insert: db.prepare('INSERT INTO blobs VALUES (?)') };
}

test('without a checkpointer, the log grows with every step (the premise)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmacontrol-wal-'));
  const { file, db, insert } = database(dir);
  await writeInSteps((blob) => void insert.run(blob));
  assert.ok(walSize(file) > 10 * MiB, `the log holds all 12 MiB: ${walSize(file)}`);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('with one, the log is moved into the file between steps and starts again from its beginning', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmacontrol-wal-'));
  const { file, db, insert } = database(dir);
  const checkpointer = new WalCheckpointer(file, 50);
  await writeInSteps((blob) => void insert.run(blob));
  assert.ok(walSize(file) < 3 * MiB, `the log stays short: ${walSize(file)}`);
  assert.is(db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM blobs').get()!.n, 24);
  await checkpointer.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a worker that cannot open its file says so in a process warning', async () => {
  const file = join(tmpdir(), `pmacontrol-missing-${process.pid}.sqlite`);
  const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
  const checkpointer = new WalCheckpointer(file);
  // The worker does not hold the process open (it is unref'd): this timer does, while it fails.
  const hold = setTimeout(() => {}, 10_000);
  const warning = (await warned) as Error & { code?: string };
  clearTimeout(hold);
  assert.is(warning.code, 'PMACONTROL_CHECKPOINTER');
  assert.match(warning.message, file);
  await checkpointer.stop();
});

test('the SQLite event store runs one: appends in steps leave a short log, every event readable', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmacontrol-wal-'));
  const file = join(dir, 'events.sqlite');
  const store = new SqliteEventStore(file);
  let revision = -1;
  await writeInSteps(async (blob) => {
    const data = { blob: blob.toString('base64') };
    const event = { type: 'Blob', data, metadata: { actor: 'test' } };
    const expected = revision === -1 ? 'no_stream' : revision;
    revision = (await store.append(CONFIG_STREAM, [event], expected)).nextRevision;
  });
  assert.ok(walSize(file) < 3 * MiB, `the log stays short: ${walSize(file)}`);
  assert.is((await store.readStream(CONFIG_STREAM)).length, 24);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test.run();
