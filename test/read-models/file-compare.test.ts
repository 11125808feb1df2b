import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { compare, rebuild } from '../../src/application/replay.js';
import { leafOf } from '../../src/log/index.js';
import { fileDifferences, linesDifferences } from '../../src/read-models/sqlite/file-compare.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import Database from '../../src/sqlite/driver.js';
import { startHarness } from '../support/harness.js';
import { tempDir } from '../support/process.js';

/**
 * `replay` compares two read-model files row by row in raw mode, value by value: it must find exactly
 * what comparing their lines (a JSON string per row) finds — every row changed, missing or added, in
 * every table, text and blob told apart, and nothing for the rows it leaves out on purpose.
 */
const it = suite("replay's comparison: rows compared value by value find what lines compared as text find");

/** One alteration per table of the stored file, and a row of the bookkeeping left out on purpose. */
const ALTERATIONS = `
  UPDATE entries SET doc = replace(doc, '"t5"', '"T5"') WHERE resource = 'tags' AND id = 5;
  DELETE FROM versions WHERE resource = 'tags' AND entry_id = 7;
  INSERT INTO tombstones (resource, id, version, created_at) VALUES ('tags', 99, 1, '2026-01-01T00:00:00.000Z');
  UPDATE changes SET actor = 'someone else' WHERE position = 12;
  UPDATE counters SET last_id = last_id + 1 WHERE resource = 'tags';
  UPDATE log_nodes SET hash = zeroblob(32) WHERE (level, idx) = (SELECT level, idx FROM log_nodes ORDER BY level, idx LIMIT 1);
  INSERT INTO meta (name, value) VALUES ('list:tags:ignored', 'x');
  UPDATE entries SET doc = CAST(doc AS BLOB) WHERE resource = 'tags' AND id = 9;
`;

/** A log of 40 tags, one changed. */
async function withLog(h: Awaited<ReturnType<typeof startHarness>>): Promise<void> {
  const caller = { actor: 'test', requestId: 'r' };
  for (let i = 1; i <= 40; i++) {
    const input = { name: `t${i}`, color: '#000000', background: '#FFFFFF' };
    await h.service.write.execute({ kind: 'create', resource: 'tags', input }, caller);
  }
  await h.service.write.execute({ kind: 'patch', resource: 'tags', id: 3, input: { color: '#111111' } }, caller);
}

it('two rebuilds of one log, one of them altered in every table: the same differences both ways', async () => {
  const h = await startHarness();
  try {
    await withLog(h);
    const files = ['stored', 'rebuilt'].map((name) => join(tempDir(), `${name}.sqlite`));
    const [stored, rebuilt] = files.map((file) => new SqliteReadModelStore(file, undefined, true));
    for (const store of [stored!, rebuilt!]) await rebuild(h.store, store, leafOf);
    assert.equal(await compare(rebuilt!, stored!), [], 'two rebuilds of one log are equal');
    const db = new Database(files[0]!);
    db.exec(ALTERATIONS);
    db.close();
    const byLines = linesDifferences(rebuilt!.lines(), stored!.lines());
    const [one, other] = files.map((file) => new Database(file, { readonly: true }));
    const byRows = fileDifferences(one!, other!);
    for (const db of [one!, other!]) db.close();
    assert.equal(byRows, byLines);
    const keys = byRows.map((d) => `${d.table} ${d.key}`);
    for (const expected of [
      'entries tags/5',
      'versions tags/7/0',
      'tombstones tags/99',
      'changes 12',
      'counters tags',
    ]) {
      assert.ok(keys.includes(expected), `${expected} in ${keys.join(', ')}`);
    }
    assert.ok(
      keys.some((key) => key.startsWith('log_nodes ')),
      `a tree node in ${keys.join(', ')}`,
    );
    assert.ok(keys.includes('entries tags/9'), 'text and the same bytes as a blob are not the same value');
    assert.not.ok(
      keys.some((key) => key.startsWith('meta list:')),
      'list bookkeeping is not compared',
    );
    const lines = await compare(rebuilt!, stored!);
    assert.ok(
      lines.some((line) => /^tombstones tags\/99: rebuilt absent, stored \[1,/.test(line)),
      lines.join('\n'),
    );
    for (const store of [stored!, rebuilt!]) store.close();
  } finally {
    await h.close();
  }
});

it('a list snapshot that is not the list the log gives is found, from a rebuild whose indexes are not built', async () => {
  const h = await startHarness();
  try {
    await withLog(h);
    const caller = { actor: 'test', requestId: 'r' };
    for (let i = 0; i < 1_100; i++) {
      const input = { color: `#${(i % 4096).toString(16).padStart(6, '0')}` };
      await h.service.write.execute({ kind: 'patch', resource: 'tags', id: 1 + (i % 40), input }, caller);
    }
    const files = ['stored', 'rebuilt'].map((name) => join(tempDir(), `${name}.sqlite`));
    const [stored, rebuilt] = files.map((file) => new SqliteReadModelStore(file, undefined, true));
    for (const store of [stored!, rebuilt!]) await rebuild(h.store, store, leafOf);
    assert.equal(await compare(rebuilt!, stored!), [], 'two rebuilds of one log are equal');
    const db = new Database(files[0]!);
    const [position] = db.prepare("SELECT position FROM list_snapshots_done WHERE resource = 'tags'").pluck().all();
    assert.ok(position !== undefined, 'a list snapshot of the tags was taken');
    db.prepare("UPDATE list_snapshots SET doc = replace(doc, '\"t5\"', '\"T5\"') WHERE resource = 'tags'").run();
    db.close();
    const lines = await compare(rebuilt!, stored!);
    assert.ok(
      lines.includes(`list_snapshots tags/${position}: not the list the log gives at that position`),
      lines.join('\n'),
    );
    for (const store of [stored!, rebuilt!]) store.close();
  } finally {
    await h.close();
  }
});

it.run();
