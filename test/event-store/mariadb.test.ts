import { randomUUID } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MariadbEventStore } from '../../src/event-store/mariadb/store.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { storeContract } from './contract.js';

const url = await mariadbUrl();
if (url) {
  // Streams get a fresh suffix: the shared database keeps what earlier runs wrote.
  storeContract('mariadb', async () => new MariadbEventStore({ url, poll: { minMs: 10, maxMs: 50 } }), {
    unique: () => randomUUID().replace(/-/g, ''),
  });

  const large = suite('mariadb store: one append larger than max_allowed_packet');
  large('goes in whole, in one transaction', async () => {
    const db = await freshDatabase(url);
    const store = new MariadbEventStore({ url: db.url });
    try {
      const admin = await createConnection({ uri: db.url });
      const [[{ packet }]] = (await admin.query('SELECT @@max_allowed_packet AS packet')) as unknown as [
        [{ packet: number }],
      ];
      await admin.end();
      const padding = 'x'.repeat(1000);
      const count = Math.ceil((packet * 1.5) / 1000);
      const events = Array.from({ length: count }, (_, i) => ({ type: 'Filled', data: { i, padding }, metadata: {} }));
      const result = await store.append('big', events, 'no_stream');
      assert.is(result.nextRevision, count - 1);
      const all = await store.readAll({ maxCount: count + 10 });
      assert.is(all.length, count);
      assert.equal(all.map((e) => e.revision).slice(-2), [count - 2, count - 1]);
    } finally {
      await store.close();
      await db.drop();
    }
  });
  large.run();

  const ranges = suite('mariadb store: a stream read by ranges of revisions');
  ranges('from any revision, past 10,000 and past rows removed by hand', async () => {
    const db = await freshDatabase(url);
    const store = new MariadbEventStore({ url: db.url });
    try {
      const events = Array.from({ length: 25_000 }, (_, i) => ({ type: 'Counted', data: { i }, metadata: {} }));
      await store.append('long', events, 'no_stream');
      const revisions = async (fromRevision: number, maxCount?: number) =>
        (await store.readStream('long', { fromRevision, maxCount })).map((event) => event.revision);
      assert.equal(await revisions(12_345, 3), [12_345, 12_346, 12_347]);
      assert.equal(await revisions(24_998, 10), [24_998, 24_999]);
      assert.equal(await revisions(25_000, 10), []);
      const all = await revisions(0);
      assert.is(all.length, 25_000);
      assert.ok(all.every((revision, i) => revision === i));
      const admin = await createConnection({ uri: db.url });
      await admin.query(
        "DELETE FROM pmacontrol_events WHERE stream = 'long' AND (revision = 100 OR revision BETWEEN 10000 AND 19999)",
      );
      await admin.end();
      assert.equal(await revisions(97, 6), [97, 98, 99, 101, 102, 103]);
      assert.equal(await revisions(9_998, 4), [9_998, 9_999, 20_000, 20_001]);
      assert.is((await revisions(0)).length, 14_999);
    } finally {
      await store.close();
      await db.drop();
    }
  });
  ranges.run();

  const timeouts = suite('mariadb store: a statement past the query timeout');
  timeouts('an append that times out answers within the timeout, not when the server answers again', async () => {
    const db = await freshDatabase(url);
    const store = new MariadbEventStore({ url: db.url, queryTimeoutMs: 500 });
    // Another session holds the stream's head: the append's locking read waits on the server, as it
    // would on a frozen one; the session is let go only after the append settled or 10 s passed.
    const holder = await createConnection({ uri: db.url });
    try {
      await store.append('held', [{ type: 'First', data: {}, metadata: {} }], 'no_stream');
      await holder.query('START TRANSACTION');
      await holder.query("SELECT MAX(revision) FROM pmacontrol_events WHERE stream = 'held' FOR UPDATE");
      const started = Date.now();
      const outcome = await Promise.race([
        store.append('held', [{ type: 'Second', data: {}, metadata: {} }], 0).then(
          () => 'appended',
          (error: Error) => error.name,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000)),
      ]);
      const took = Date.now() - started;
      assert.is(outcome, 'StoreUnavailable');
      assert.ok(took < 5_000, `the append answered after ${took} ms`);
      await holder.query('ROLLBACK');
      const next = await store.append('held', [{ type: 'Second', data: {}, metadata: {} }], 0);
      assert.is(next.nextRevision, 1, 'the store works once the lock is gone');
    } finally {
      await holder.end();
      await store.close();
      await db.drop();
    }
  });
  timeouts.run();
} else skipWithoutMariadb('event store contract: mariadb');
