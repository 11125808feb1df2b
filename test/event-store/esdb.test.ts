import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import { EsdbEventStore } from '../../src/event-store/esdb/store.js';
import { storeContract } from './contract.js';

const connection = process.env.EVENTSTORE_CONNECTION_STRING;

if (connection) {
  // Streams get a fresh suffix so that runs against a long-lived server do not see each other.
  storeContract('eventstoredb', async () => new EsdbEventStore(connection), {
    unique: () => randomUUID().replace(/-/g, ''),
  });
} else {
  console.log(
    '\n  SKIPPED: EventStoreDB contract suite — set EVENTSTORE_CONNECTION_STRING (e.g. esdb://127.0.0.1:2113?tls=false) to run it against a real server.\n',
  );
  test.skip('event store contract: eventstoredb (EVENTSTORE_CONNECTION_STRING is not set)', () => {});
  test.run();
}
