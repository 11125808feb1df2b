import { randomUUID } from 'node:crypto';
import { MariadbEventStore } from '../../src/event-store/mariadb/store.js';
import { mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { storeContract } from './contract.js';

const url = await mariadbUrl();
if (url) {
  // Streams get a fresh suffix: the shared database keeps what earlier runs wrote.
  storeContract('mariadb', async () => new MariadbEventStore({ url, poll: { minMs: 10, maxMs: 50 } }), {
    unique: () => randomUUID().replace(/-/g, ''),
  });
} else skipWithoutMariadb('event store contract: mariadb');
