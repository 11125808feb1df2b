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
} else skipWithoutMariadb('event store contract: mariadb');
