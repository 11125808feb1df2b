import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, startHarness } from '../support/harness.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { caughtUp, projectedHarness, withSchema } from '../support/pmacontrol-tables.js';

/**
 * The routes of the projection into PmaControl's tables, through the harness: every answer is
 * checked against the OpenAPI document, as every route's is.
 */
const url = await mariadbUrl();
const it = suite('/fr/api/pmacontrol/status and drift: answers as the OpenAPI document says, roles as it says');

const SETUP = { actor: 'setup', requestId: 'setup' };

const withProjection = (dbUrl: string) => projectedHarness(dbUrl);

it('without PMACONTROL_DB_URL: the status says so, drift is a 404', async () => {
  const h = await startHarness();
  try {
    const status = await h.request('GET', '/fr/api/pmacontrol/status');
    assert.equal([status.status, status.body.enabled, status.body.lag], [200, false, 0]);
    const drift = await h.request('GET', '/fr/api/pmacontrol/drift');
    assert.equal([drift.status, drift.body.code], [404, 'not_found']);
    assert.match(drift.body.detail, 'PMACONTROL_DB_URL');
  } finally {
    await h.close();
  }
});

if (!url) skipWithoutMariadb('the pmacontrol routes');
else {
  it('status, drift, adopt and overwrite: answers and refusals', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const h = await withProjection(db.url);
    try {
      const { token } = await h.service.write.issueToken(
        { name: 'admin', role: 'admin', secrets: false, expiresAt: null },
        SETUP,
      );
      const admin = { Authorization: `Bearer ${token}` };
      const made = await h.request('POST', `${BASE}/tags`, {
        body: { name: 'galera', color: '#FFFFFF', background: '#000000' },
        headers: admin,
      });
      assert.is(made.status, 201);
      const status = await caughtUp(h);
      assert.equal([status.enabled, status.applying, status.lag], [true, true, 0]);
      const connection = await createConnection({ uri: db.url });
      await connection.query("UPDATE tag SET background = '#ABCDEF' WHERE id = 1");
      await connection.end();
      const drift = await h.request('GET', '/fr/api/pmacontrol/drift');
      assert.equal(drift.body.items, [
        { table: 'tag', id: 1, column: 'background', service: '#000000', pmacontrol: '#ABCDEF' },
      ]);
      const asReader = await h.request('POST', '/fr/api/pmacontrol/drift/adopt', { body: { all: true } });
      assert.is(asReader.status, 403);
      const bad = await h.request('POST', '/fr/api/pmacontrol/drift/adopt', { body: { items: [] }, headers: admin });
      assert.equal([bad.status, bad.body.code], [422, 'validation_failed']);
      const adopted = await h.request('POST', '/fr/api/pmacontrol/drift/adopt', {
        body: { all: true },
        headers: admin,
      });
      assert.equal(adopted.body, { adopted: 1, events: 1 });
      assert.is((await h.request('GET', `${BASE}/tags/1`)).body.item.background, '#ABCDEF');
      const none = await h.request('POST', '/fr/api/pmacontrol/drift/overwrite', {
        body: { all: true },
        headers: admin,
      });
      assert.equal(none.body, { overwritten: 0 });
    } finally {
      await h.close();
      await db.drop();
    }
  });
  it('drift is computed once per change of either side: readers at once share it; a row or a write changed, again', async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const h = await withProjection(db.url);
    try {
      const { token } = await h.service.write.issueToken(
        { name: 'writer', role: 'writer', secrets: false, expiresAt: null },
        SETUP,
      );
      const writer = { Authorization: `Bearer ${token}` };
      const tag = { name: 'galera', color: '#FFFFFF', background: '#000000' };
      assert.is((await h.request('POST', `${BASE}/tags`, { body: tag, headers: writer })).status, 201);
      await caughtUp(h);
      const readers = () => Promise.all(Array.from({ length: 8 }, () => h.request('GET', '/fr/api/pmacontrol/drift')));
      const checkedAt = (answers: { body: { checked_at: string } }[]) => new Set(answers.map((a) => a.body.checked_at));
      const first = await readers();
      assert.is(checkedAt(first).size, 1, 'eight readers at once: one computation');
      await new Promise((r) => setTimeout(r, 5));
      const again = await readers();
      assert.equal([...checkedAt(again)], [...checkedAt(first)], 'nothing changed on either side: the same answer');
      const connection = await createConnection({ uri: db.url });
      await connection.query("UPDATE tag SET background = '#ABCDEF' WHERE id = 1");
      await connection.end();
      const afterRow = await h.request('GET', '/fr/api/pmacontrol/drift');
      assert.is.not(afterRow.body.checked_at, first[0]!.body.checked_at, 'a row changed by PmaControl: computed again');
      assert.is(afterRow.body.items.length, 1);
      await new Promise((r) => setTimeout(r, 5));
      assert.is(
        (await h.request('POST', `${BASE}/tags`, { body: { ...tag, name: 'paris' }, headers: writer })).status,
        201,
      );
      const afterWrite = await h.request('GET', '/fr/api/pmacontrol/drift');
      assert.is.not(afterWrite.body.checked_at, afterRow.body.checked_at, 'a write: computed again');
    } finally {
      await h.close();
      await db.drop();
    }
  });
}

it.run();
