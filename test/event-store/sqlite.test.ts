import { join } from 'node:path';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { tempDir } from '../support/process.js';
import { storeContract } from './contract.js';

storeContract(
  'sqlite',
  async () => new SqliteEventStore(join(tempDir('pmacontrol-store-'), 'events.sqlite'), { pollMs: 20 }),
);
