import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.js';
import type { DeliveryLedger } from '../../src/event-rules/ledger.js';
import { mariadbLedger } from '../../src/event-rules/mariadb-ledger.js';
import { sqliteLedger } from '../../src/event-rules/sqlite-ledger.js';
import { freshDatabase, mariadbUrl } from '../support/mariadb.js';
import { tempDir } from '../support/process.js';

/**
 * The ledger's contract, on SQLite and on MariaDB: one holder of the lease at a time, a cursor that
 * moves only from where its holder saw it (a replay in between wins), outcomes recorded only by the
 * holder, redeliveries queued by anyone, delivered rows pruned to the latest ones.
 */

const delivery = (rule: number, position: number, state: 'delivered' | 'dead' | 'retrying' = 'delivered') => ({
  rule,
  position,
  state,
  attempts: 1,
  last_status: state === 'delivered' ? 204 : 500,
  last_error: state === 'delivered' ? null : 'answered 500',
  next_at: null,
  first_at: '2026-11-29T08:00:00.000Z',
});

async function contract(ledger: DeliveryLedger): Promise<void> {
  const now = Date.now();
  assert.ok(await ledger.lease('a', 10_000, now));
  assert.not.ok(await ledger.lease('b', 10_000, now + 1000), 'held by a');
  assert.is(await ledger.holder(now + 1000), 'a');
  assert.ok(await ledger.lease('b', 10_000, now + 11_000), 'expired: b takes it');
  assert.not.ok(await ledger.advance('a', 1, undefined, 5, 5), 'a no longer holds it');
  assert.not.ok(await ledger.record('a', delivery(1, 6)));
  assert.ok(await ledger.advance('b', 1, undefined, 5, 5));
  assert.not.ok(await ledger.advance('b', 1, 4, 9, 5), 'the cursor is not 4');
  assert.ok(await ledger.record('b', delivery(1, 6)));
  assert.ok(await ledger.record('b', delivery(1, 7, 'dead')));
  assert.ok(await ledger.advance('b', 1, 5, 9, 5));
  assert.equal([...(await ledger.between(1, 5, 9)).keys()], [6, 7]);
  assert.is((await ledger.progress(1))?.last_error, 'answered 500');
  await ledger.rewind(1, 2);
  assert.equal((await ledger.progress(1))?.cursor, 2);
  assert.not.ok(await ledger.advance('b', 1, 9, 10, 5), 'a replay in between wins');
  assert.equal((await ledger.deliveries(1, undefined, 0, 10)).length, 0, 'a replay forgets what it sends again');
  await ledger.redeliver(1, 3, new Date(now));
  assert.equal(
    (await ledger.redeliveries(10)).map((d) => [d.rule, d.position, d.state]),
    [[1, 3, 'pending']],
  );
  assert.ok(await ledger.record('b', { ...delivery(1, 3), attempts: 1 }));
  assert.equal(await ledger.redeliveries(10), []);
  for (let position = 10; position < 40; position++) await ledger.record('b', delivery(2, position));
  await ledger.record('b', delivery(2, 5, 'dead'));
  await ledger.prune(2, 10);
  const kept = await ledger.deliveries(2, undefined, 0, 100);
  assert.equal(
    kept.map((d) => d.position),
    [5, ...Array.from({ length: 10 }, (_, i) => 30 + i)],
  );
  await ledger.release('b');
  assert.is(await ledger.holder(now + 11_000), undefined);
}

test('the SQLite ledger (DATA_DIR/event-rules.sqlite)', async () => {
  const ledger = sqliteLedger(tempDir());
  try {
    await contract(ledger);
  } finally {
    await ledger.close();
  }
});

const url = await mariadbUrl();
if (url) {
  test('the MariaDB ledger (tables in the event store database)', async () => {
    const database = await freshDatabase(url);
    const config = loadConfig({ EVENT_STORE: 'mariadb', MARIADB_URL: database.url, CONFIG_SECRET_KEY: 'x' });
    const ledger = mariadbLedger(config.mariadb!);
    try {
      await contract(ledger);
    } finally {
      await ledger.close();
      await database.drop();
    }
  });
} else test.skip('the MariaDB ledger (no MariaDB reachable)', () => {});

test.run();
