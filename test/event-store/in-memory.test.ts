import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import { storeContract } from './contract.js';

storeContract('in-memory', async () => new InMemoryEventStore());
