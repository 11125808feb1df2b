import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Blocked, type TableWork } from '../../src/pmacontrol/database.js';
import { MariadbPmaControlDatabase } from '../../src/pmacontrol/mariadb-tables.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { withSchema } from '../support/pmacontrol-tables.js';

const url = await mariadbUrl();
const it = suite('PmaControlDatabase: batches, the lease that fences them, values refused');

/** A batch that inserts tags. */
const tags =
  (...rows: [number, string][]): TableWork =>
  (tx) =>
    tx.insert(
      'tag',
      rows.map(([id, name]) => ({ id, name, color: '#FFFFFF', background: '#000000' })),
    );

async function names(dbUrl: string): Promise<string[]> {
  const connection = await createConnection({ uri: dbUrl });
  const [rows] = (await connection.query('SELECT name FROM tag ORDER BY id')) as any;
  await connection.end();
  return rows.map((row: { name: string }) => row.name);
}

if (!url) skipWithoutMariadb('PmaControlDatabase');
else {
  it('a batch and its position in one transaction; a value refused rolls both back and says why', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const database = new MariadbPmaControlDatabase(db.url);
    try {
      assert.ok(await database.lease('a', 5000));
      assert.ok(await database.apply('a', 5000, 10, tags([1, 'x'], [2, 'y'])));
      const state = await database.state();
      assert.is(state.position, 10);
      assert.match(state.appliedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'applied_at in ISO 8601');
      // tag.name is latin1: MariaDB refuses 東 (and X again, as its unique key compares case-insensitively).
      for (const refused of [tags([3, 'ok'], [4, '東京']), tags([3, 'ok'], [4, 'X'])]) {
        const error = await database.apply('a', 5000, 12, refused).catch((e: Error) => e);
        assert.instance(error, Blocked);
        assert.match((error as Error).message, /refused a row/);
      }
      assert.equal(await names(db.url), ['x', 'y'], 'nothing of the refused batches');
      assert.is((await database.state()).position, 10);
      assert.ok(await database.apply('a', 5000, 12, tags([3, 'ok'])), 'the connection is usable after a refusal');
    } finally {
      await database.close();
      await db.drop();
    }
  });

  it('one holder at a time: another cannot take a live lease, nor apply under it; it takes an expired one', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const a = new MariadbPmaControlDatabase(db.url);
    const b = new MariadbPmaControlDatabase(db.url);
    try {
      assert.ok(await a.lease('a', 1000));
      assert.not.ok(await b.lease('b', 1000));
      assert.not.ok(await b.apply('b', 1000, 5, tags([1, 'from-b'])), 'fenced: nothing written');
      assert.equal(await names(db.url), []);
      await new Promise((r) => setTimeout(r, 1100));
      assert.ok(await b.lease('b', 1000), 'expired: taken over');
      assert.not.ok(await a.apply('a', 1000, 5, tags([1, 'from-a'])), 'the old holder is fenced');
      assert.ok(await b.apply('b', 1000, 5, tags([1, 'from-b'])));
      assert.equal([await names(db.url), (await a.state()).holder], [['from-b'], 'b']);
      await b.release('b');
      assert.ok(await a.lease('a', 1000), 'a lease given up is free at once');
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
}

it.run();
