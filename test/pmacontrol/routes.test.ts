import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPmaControlCrypt, readPmaControlCryptKey } from '../../src/pmacontrol/crypt.js';
import { MariadbPmaControlDatabase } from '../../src/pmacontrol/mariadb-tables.js';
import { PmaControlProjection } from '../../src/pmacontrol/projection.js';
import { WriteValidator } from '../../src/schemas/validator.js';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { writeCryptConfig } from '../support/php.js';
import { withSchema } from '../support/pmacontrol-tables.js';
import { tempDir } from '../support/process.js';

/**
 * The routes of the projection into PmaControl's tables, through the harness: every answer is
 * checked against the OpenAPI document, as every route's is.
 */
const url = await mariadbUrl();
const it = suite('/fr/api/pmacontrol/status and drift: answers as the OpenAPI document says, roles as it says');

const SETUP = { actor: 'setup', requestId: 'setup' };

async function withProjection(dbUrl: string): Promise<Harness> {
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(writeCryptConfig(tempDir())));
  const validator = new WriteValidator();
  return startHarness({
    access: { anonymousRole: 'reader', corsOrigins: [] },
    pmacontrol: (service, logger) =>
      new PmaControlProjection({
        service,
        database: new MariadbPmaControlDatabase(dbUrl),
        crypt,
        logger,
        leaseMs: 2000,
        driftMs: 0,
        parse: (resource, mode, body) => validator.parse(resource, mode, body).input as typeof body,
      }),
  });
}

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
      let status = (await h.request('GET', '/fr/api/pmacontrol/status')).body;
      for (let i = 0; i < 100 && (status.lag !== 0 || !status.applying); i++) {
        await new Promise((r) => setTimeout(r, 20));
        status = (await h.request('GET', '/fr/api/pmacontrol/status')).body;
      }
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
}

it.run();
