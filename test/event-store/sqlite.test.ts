import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { storeContract } from './contract.js';

storeContract(
  'sqlite',
  async () =>
    new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'pmacontrol-store-')), 'events.sqlite'), { pollMs: 20 }),
);
