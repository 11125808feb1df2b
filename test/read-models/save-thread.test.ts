import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Projector } from '../../src/application/projector.js';
import { rebuild } from '../../src/application/replay.js';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { leafOf } from '../../src/log/index.js';
import { MAX_UNSAVED } from '../../src/read-models/sqlite/save-thread.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import Database from '../../src/sqlite/driver.js';
import { logged, tagCreated } from '../support/given.js';
import { tempDir } from '../support/process.js';

/**
 * A read-model file in use is saved from a worker thread: a save hands the batch over and returns,
 * every question asked of the store afterwards sees it, a failing save is tried again until it
 * lands, and should the worker stop, the saves go on in this thread without losing one.
 */

const it = suite('read models saved from a worker thread');

function setUp(saveHoldMs?: number) {
  const location = join(tempDir(), 'read-models.sqlite');
  const readModels = new SqliteReadModelStore(location, undefined, false, saveHoldMs);
  const errors: Error[] = [];
  const projector = new Projector(new InMemoryEventStore(), readModels, leafOf, (error) => errors.push(error));
  /** Another connection to the same file, as a second instance or an operator would have. */
  const other = new Database(location);
  let next = 0;
  /** Folds `count` new tags and hands them to the store at once. */
  const fold = (count = 1) => {
    projector.apply(
      logged(
        Array.from({ length: count }, (_, i) => tagCreated(next + 1 + i)),
        next,
      ),
    );
    next += count;
    projector.flush();
  };
  const checkpoint = () =>
    Number(other.prepare("SELECT value FROM meta WHERE name = 'checkpoint'").pluck().get() ?? -1);
  const stored = () => [...readModels.lines()].filter((line) => line.table === 'entries').length;
  return { location, readModels, projector, other, errors, fold, checkpoint, stored };
}

const until = async (ready: () => boolean, what: string) => {
  const limit = Date.now() + 5000;
  while (!ready()) {
    if (Date.now() > limit) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/** Saves into `other`'s file fail until `cure()`: a trigger refuses new entries. */
function failing(other: BetterSqlite3.Database): { cure: () => void } {
  other.exec(`CREATE TABLE fail (x);
    CREATE TRIGGER failing BEFORE INSERT ON entries WHEN EXISTS (SELECT 1 FROM fail)
    BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END;
    INSERT INTO fail VALUES (1)`);
  return { cure: () => other.exec('DELETE FROM fail') };
}

it('a save returns before it is written; the next question of the store waits for it', () => {
  const { readModels, other, errors, fold, checkpoint, stored } = setUp();
  // Holding the file's write lock: a save made on this thread would wait here for it, then fail.
  other.exec('BEGIN IMMEDIATE');
  fold(3);
  assert.is(checkpoint(), -1, 'not written yet: the lock is held');
  other.exec('COMMIT');
  assert.is(stored(), 3, 'the question waited for the save handed over before it');
  assert.equal(errors, []);
  readModels.close();
});

it('saves are held for the next ones and written together; a question has them written at once', () => {
  // Held far longer than a question would wait (10 s): only being told to write them makes it see them.
  const { readModels, other, errors, fold, checkpoint, stored } = setUp(60_000);
  const commits = () => other.pragma('data_version', { simple: true });
  const before = commits();
  fold(1);
  fold(2);
  fold(3);
  assert.is(checkpoint(), -1, 'held: nothing written yet');
  assert.is(commits(), before, 'no commit by the worker yet');
  assert.is(stored(), 6, 'the question had the three saves written');
  assert.is(checkpoint(), 5);
  assert.equal(errors, []);
  readModels.close();
});

it('a failing save is reported, does not hold questions, and lands once the failure is gone', async () => {
  const { readModels, other, errors, fold, checkpoint, stored } = setUp();
  const { cure } = failing(other);
  fold(2);
  await until(() => errors.length > 0, 'the failure reported');
  assert.match(errors[0].message, 'the disk is on fire');
  assert.is(stored(), 0, 'a question while saves fail answers from what is stored');
  fold(1);
  cure();
  await until(() => checkpoint() === 2, 'the saves retried');
  assert.is(stored(), 3, 'both batches landed, in order');
  readModels.close();
});

it('a worker that stops unasked: the batches it had not saved, and the next ones, are saved here', async () => {
  const { readModels, other, errors, fold, stored } = setUp();
  fold(1);
  assert.is(stored(), 1);
  const { cure } = failing(other);
  fold(2);
  await until(() => errors.length > 0, 'the save failed in the worker');
  const warned = once(process, 'warning');
  await (readModels as unknown as { saving: { worker: Worker } }).saving.worker.terminate();
  const [warning] = (await warned) as [Error & { code?: string }];
  assert.is(warning.code, 'PMACONTROL_SAVE_THREAD');
  cure();
  fold(4);
  assert.is(stored(), 7, 'the batch the worker never saved, then the next');
  readModels.close();
});

it("a rebuild whose worker stops unasked fails: nothing is saved after the jobs lost with the worker's transaction", async () => {
  const location = join(tempDir(), 'rebuilt.sqlite');
  const target = new SqliteReadModelStore(location, undefined, true);
  const errors: Error[] = [];
  const projector = new Projector(new InMemoryEventStore(), target, leafOf, (error) => errors.push(error));
  const saving = (target as unknown as { saving: { worker: Worker; settle(): void } }).saving;
  projector.apply(logged([tagCreated(1)], 0));
  projector.flush();
  projector.apply(logged([tagCreated(2)], 1));
  projector.flush();
  // The first batch is written in the worker's transaction, not committed (no consistent point yet).
  saving.settle();
  await saving.worker.terminate();
  await until(() => errors.length > 0, 'the rebuild told of its stopped worker');
  assert.match(errors[0].message, /the saving thread of the rebuild in .* stopped/);
  projector.apply(logged([tagCreated(3)], 2));
  projector.flush();
  target.close();
  const again = new SqliteReadModelStore(location, undefined, true);
  assert.is(again.load().state.revision, -1, 'nothing saved on top of the lost batch');
  again.close();
});

it('a bounded number of batches wait for the worker: the next save waits until the first is written', async () => {
  const { location, readModels, fold, checkpoint, errors, stored } = setUp();
  // Another process holds the write lock for a moment: the worker cannot write meanwhile.
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(process.argv[1]);
       db.exec('BEGIN IMMEDIATE'); console.log('locked');
       setTimeout(() => { db.exec('COMMIT'); db.close(); }, 1000);`,
      location,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(holder.stdout!, 'data');
  for (let n = 0; n < MAX_UNSAVED.inUse; n++) fold(1);
  assert.is(checkpoint(), -1, 'as many batches as there is room for, handed over while the file is locked');
  fold(1);
  assert.ok(checkpoint() >= 0, 'the next save returned only once the first batch was written');
  assert.is(stored(), MAX_UNSAVED.inUse + 1);
  assert.equal(errors, []);
  readModels.close();
});

it('a rebuild into a new file stops with the error of a save that failed in the worker', async () => {
  const events = new InMemoryEventStore();
  await events.append(
    CONFIG_STREAM,
    Array.from({ length: 30 }, (_, i) => ({ ...tagCreated(i + 1), metadata: { actor: 't', at: '', request_id: 'r' } })),
    'no_stream',
  );
  const location = join(tempDir(), 'rebuilt.sqlite');
  const target = new SqliteReadModelStore(location, undefined, true);
  failing(new Database(location));
  try {
    await rebuild(events, target, leafOf);
    assert.unreachable('the rebuild should have failed');
  } catch (error) {
    assert.match((error as Error).message, 'the disk is on fire');
  }
  target.close();
});

it('close saves what was handed over: the file holds it on the next start', () => {
  const { location, readModels, fold } = setUp();
  fold(50);
  readModels.close();
  const again = new SqliteReadModelStore(location);
  const { state } = again.load();
  assert.equal([state.revision, state.collections.tags.size], [49, 50]);
  again.close();
});

it.run();
