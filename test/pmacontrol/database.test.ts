import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EntryWrite } from '../../src/pmacontrol/database.js';
import { MariadbPmaControlDatabase } from '../../src/pmacontrol/mariadb-tables.js';
import { keptOf } from '../../src/pmacontrol/rows.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { withSchema } from '../support/pmacontrol-tables.js';

const url = await mariadbUrl();
const it = suite('PmaControlDatabase: batches, the lease that fences them, values that move between rows');

const tag = (id: number, name: string): EntryWrite => ({
  kept: keptOf('tags')!,
  id,
  row: { id, name, color: '#FFFFFF', background: '#000000' },
  links: [],
});

async function names(dbUrl: string): Promise<string[]> {
  const connection = await createConnection({ uri: dbUrl });
  const [rows] = (await connection.query('SELECT name FROM tag ORDER BY id')) as any;
  await connection.end();
  return rows.map((row: { name: string }) => row.name);
}

if (!url) skipWithoutMariadb('PmaControlDatabase');
else {
  it('two names swapped in one batch are written (set aside first), and the position moves with them', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const database = new MariadbPmaControlDatabase(db.url);
    try {
      assert.ok(await database.lease('a', 5000));
      assert.ok(await database.apply('a', 5000, 10, [tag(1, 'x'), tag(2, 'y')]));
      assert.ok(await database.apply('a', 5000, 12, [tag(1, 'y'), tag(2, 'x')]));
      assert.equal(await names(db.url), ['y', 'x']);
      assert.is((await database.state()).position, 12);
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
      assert.not.ok(await b.apply('b', 1000, 5, [tag(1, 'from-b')]), 'fenced: nothing written');
      assert.equal(await names(db.url), []);
      await new Promise((r) => setTimeout(r, 1100));
      assert.ok(await b.lease('b', 1000), 'expired: taken over');
      assert.not.ok(await a.apply('a', 1000, 5, [tag(1, 'from-a')]), 'the old holder is fenced');
      assert.ok(await b.apply('b', 1000, 5, [tag(1, 'from-b')]));
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
