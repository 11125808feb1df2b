import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCE_NAMES } from '../../src/domain/resources.js';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { newLogKey } from '../../src/log/key.js';
import { BASE, send } from '../support/harness.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const everything = async (url: string) =>
  JSON.stringify(await Promise.all(RESOURCE_NAMES.map(async (r) => (await send(url, 'GET', `${BASE}/${r}`)).body)));

const url = await mariadbUrl();
if (url) {
  const it = suite('copy-log: from the embedded store to MariaDB and back');

  it('the copy holds the same log; a service on it serves the same inventory; a non-empty target is refused', async () => {
    const key = randomBytes(32).toString('hex');
    const logKey = newLogKey();
    const source = tempDir();
    const first = await spawnService({ DATA_DIR: source, CONFIG_SECRET_KEY: key, CONFIG_LOG_SIGNING_KEY: logKey });
    await send(first.url, 'POST', `${BASE}/tags`, { body: { name: 'prod', color: '#000000', background: '#FFFFFF' } });
    await send(first.url, 'POST', `${BASE}/servers`, {
      body: { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd: 'pw', tags: [1] },
    });
    await send(first.url, 'PATCH', `${BASE}/servers/1`, { body: { port: 3307 } });
    const before = await everything(first.url);
    assert.is(await first.stop(), 0);

    const database = await freshDatabase(url);
    try {
      const copied = await runCli(['copy-log', '--to', database.url], { DATA_DIR: source, CONFIG_SECRET_KEY: key });
      assert.is(copied.code, 0, copied.stderr);
      assert.match(copied.stdout, /copied \d+ events from sqlite to mysql:\/\//);
      const again = await runCli(['copy-log', '--to', database.url], { DATA_DIR: source, CONFIG_SECRET_KEY: key });
      assert.is(again.code, 1);
      assert.match(again.stderr, /already holds events/);

      const onMariadb = {
        EVENT_STORE: 'mariadb',
        MARIADB_URL: database.url,
        CONFIG_SECRET_KEY: key,
        CONFIG_LOG_SIGNING_KEY: logKey,
      };
      const movedDir = tempDir();
      const moved = await spawnService({ ...onMariadb, DATA_DIR: movedDir });
      try {
        assert.is(await everything(moved.url), before);
      } finally {
        await moved.stop();
      }

      // And back: the round trip gives the same events in the same order, time and actor included.
      const back = join(tempDir(), 'events.sqlite');
      const returned = await runCli(['copy-log', '--to', `sqlite:${back}`], { ...onMariadb, DATA_DIR: movedDir });
      assert.is(returned.code, 0, returned.stderr);
      const original = new SqliteEventStore(join(source, 'events.sqlite'));
      const roundTrip = new SqliteEventStore(back);
      const strip = (events: { type: string; data: unknown; metadata: unknown; revision: number }[]) =>
        events.map(({ type, data, metadata, revision }) => ({ type, data, metadata, revision }));
      assert.equal(strip(await roundTrip.readStream(CONFIG_STREAM)), strip(await original.readStream(CONFIG_STREAM)));
      await original.close();
      await roundTrip.close();
    } finally {
      await database.drop();
    }
  });

  it.run();
} else skipWithoutMariadb('copy-log to MariaDB');
