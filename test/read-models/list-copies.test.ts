import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { compare, rebuild } from '../../src/application/replay.js';
import { leafOf } from '../../src/log/index.js';
import { ListCopies } from '../../src/read-models/sqlite/list-copies.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import Database from '../../src/sqlite/driver.js';
import { startHarness } from '../support/harness.js';
import { tempDir } from '../support/process.js';

/**
 * Whole-list snapshots of a read-model file in use are copied a chunk at a time, after the save
 * that made them due: the copy must be the list as it was at that save, whatever is written while
 * it runs, and must not count until it is whole.
 */

const it = suite('list snapshots copied a chunk at a time');

/** A read-model file with the store's tables, open on a connection of the test's own. */
function file(): { location: string; db: BetterSqlite3.Database } {
  const location = join(tempDir(), 'read-models.sqlite');
  new SqliteReadModelStore(location).close();
  const db = new Database(location);
  db.pragma('journal_mode = WAL');
  return { location, db };
}

const until = async (ready: () => boolean) => {
  const limit = Date.now() + 5000;
  while (!ready()) {
    if (Date.now() > limit) throw new Error('the copy never finished');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

it('the copy is the list at its position, though entries change while it runs; it counts once whole', async () => {
  const { location, db } = file();
  const insert = db.prepare("INSERT INTO entries (resource, id, doc) VALUES ('tags', ?, ?)");
  db.transaction(() => {
    for (let id = 1; id <= 1234; id++) insert.run(id, `{"id":${id},"v":1}`);
  })();
  const finished: [string, number, number][] = [];
  // As the store does: the copy is marked whole by `done`, inside the last chunk's transaction.
  const mark = db.prepare('INSERT INTO list_snapshots_done (resource, position) VALUES (?, ?)');
  const copies = new ListCopies(location, db, (resource, position, size) => {
    finished.push([resource, position, size]);
    mark.run(resource, position);
  });
  copies.start('tags', 42);
  // Written after the save that made the snapshot due, before the copy's first step.
  db.exec(`UPDATE entries SET doc = 'changed' WHERE resource = 'tags' AND id <= 1000`);
  db.exec(`DELETE FROM entries WHERE resource = 'tags' AND id > 1200`);
  insert.run(5000, '{"id":5000}');
  const done = () => db.prepare('SELECT resource, position FROM list_snapshots_done').all();
  assert.equal(done(), [], 'counted before a single entry was copied');
  assert.ok(copies.busy('tags'));
  await until(() => finished.length > 0);
  assert.equal(finished, [['tags', 42, 1234]]);
  assert.equal(done(), [{ resource: 'tags', position: 42 }]);
  const docs = db.prepare('SELECT id, doc FROM list_snapshots WHERE position = 42 ORDER BY id').all() as {
    id: number;
    doc: string;
  }[];
  assert.is(docs.length, 1234);
  assert.ok(
    docs.every(({ id, doc }) => doc === `{"id":${id},"v":1}`),
    'a copied entry as written after the position',
  );
  assert.not.ok(copies.busy('tags'));
  copies.close();
  db.close();
});

it('a copy abandoned half way never counts as a snapshot', async () => {
  const { location, db } = file();
  const insert = db.prepare("INSERT INTO entries (resource, id, doc) VALUES ('tags', ?, ?)");
  db.transaction(() => {
    for (let id = 1; id <= 5000; id++) insert.run(id, `{"id":${id}}`);
  })();
  const copies = new ListCopies(location, db, () => {});
  copies.start('tags', 7);
  await until(() => (db.prepare('SELECT COUNT(*) AS n FROM list_snapshots').get() as { n: number }).n > 0);
  copies.close();
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(db.prepare('SELECT * FROM list_snapshots_done').all(), []);
  assert.ok((db.prepare('SELECT COUNT(*) AS n FROM list_snapshots').get() as { n: number }).n < 5000);
  db.close();
});

it('a service on a read-model file: its list snapshots are those a rebuild from the log gives, in bulk too', async () => {
  const location = join(tempDir(), 'read-models.sqlite');
  const h = await startHarness({ readModels: new SqliteReadModelStore(location) });
  try {
    const caller = { actor: 'test', requestId: 'r' };
    const tag = (i: number) => ({ name: `t${i}`, color: '#000000', background: '#FFFFFF' });
    for (let i = 1; i <= 1300; i++)
      await h.service.write.execute({ kind: 'create', resource: 'tags', input: tag(i) }, caller);
    // Changes while the copy may still run.
    await Promise.all(
      Array.from({ length: 1300 }, (_, i) =>
        h.service.write.execute({ kind: 'patch', resource: 'tags', id: i + 1, input: { color: '#222222' } }, caller),
      ),
    );
    // The list of tags reached 1,000 versions once: one snapshot, copied after the save that made it due.
    await until(() => [...h.readModels.listSnapshots()].some((taken) => taken.resource === 'tags'));
    const fresh = new SqliteReadModelStore(':memory:');
    await rebuild(h.store, fresh, leafOf);
    assert.equal(await compare(fresh, h.readModels), []);
    // A rebuild into a file filled in bulk (as `replay` makes it) holds entries back until a snapshot
    // or the end needs them: the same rows, and its own snapshots are the lists the log gives.
    const bulk = new SqliteReadModelStore(join(tempDir(), 'rebuilt.sqlite'), undefined, true);
    await rebuild(h.store, bulk, leafOf);
    assert.ok([...bulk.listSnapshots()].some((taken) => taken.resource === 'tags'));
    assert.equal(await compare(bulk, h.readModels), []);
    assert.equal(await compare(h.readModels, bulk), []);
    bulk.close();
  } finally {
    await h.close();
  }
});

it.run();
