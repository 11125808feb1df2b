import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE } from '../support/harness.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { caughtUp, projectedHarness, withSchema } from '../support/pmacontrol-tables.js';

/**
 * What one batch writes into PmaControl's tables when it holds many changes: names swapped between
 * rows (each set aside first, so that a unique value never meets itself on the way), and rows that
 * change different columns, each row updated in the statements of its own columns.
 */
const url = await mariadbUrl();
const it = suite("PmaControl's tables: a batch of many changes written as one");

if (!url) skipWithoutMariadb("PmaControl's tables written in batches");
else {
  it('two tags swap their names and a third changes its colour, in one batch: every row as the entries are', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const h = await projectedHarness(db.url, 'writer');
    const holder = await createConnection({ uri: db.url });
    try {
      const tag = (name: string) => ({ name, color: '#FFFFFF', background: '#000000' });
      const ids: number[] = [];
      for (const name of ['alpha', 'beta', 'gamma']) {
        const made = await h.request('POST', `${BASE}/tags`, { body: tag(name) });
        assert.is(made.status, 201, made.text);
        ids.push(made.body.id);
      }
      await caughtUp(h);
      // The projection's next batch waits on its state row, held here, until every change below is recorded.
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM pmacontrol_config_projection WHERE id = 1 FOR UPDATE');
      const patch = async (id: number, body: Record<string, unknown>) =>
        assert.is((await h.request('PATCH', `${BASE}/tags/${id}`, { body })).status, 200);
      await patch(ids[0]!, { name: 'held' });
      await patch(ids[1]!, { name: 'alpha' });
      await patch(ids[0]!, { name: 'beta' });
      await patch(ids[2]!, { background: '#ABCDEF' });
      await holder.query('COMMIT');
      await caughtUp(h);
      const [rows] = await holder.query('SELECT id, name, background FROM tag ORDER BY id');
      assert.equal(rows, [
        { id: ids[0], name: 'beta', background: '#000000' },
        { id: ids[1], name: 'alpha', background: '#000000' },
        { id: ids[2], name: 'gamma', background: '#ABCDEF' },
      ]);
      const drift = await h.request('GET', '/fr/api/pmacontrol/drift');
      assert.equal(drift.body.items, [], 'nothing differs');
    } finally {
      await holder.end();
      await h.close();
      await db.drop();
    }
  });
}

it.run();
