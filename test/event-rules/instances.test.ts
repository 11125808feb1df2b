import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newLogKey } from '../../src/log/key.js';
import { BASE, send } from '../support/harness.js';
import { freshDatabase, mariadbUrl } from '../support/mariadb.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { Receiver, tokenKnown } from '../support/receiver.js';

/**
 * One instance delivers at a time (a lease in the ledger beside the log): with two instances, one
 * sends; when it is killed, the other takes over at the cursor, and the receiver misses nothing.
 */

async function tags(url: string, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const tag = await send(url, 'POST', `${BASE}/tags`, {
      body: { name: `t${i}`, color: '#000000', background: '#FFFFFF' },
    });
    assert.is(tag.status, 201, tag.text);
  }
}

/** `env`: what the token command needs to reach the store (DATA_DIR, and the store's settings). */
async function takeover(a: ServiceProcess, b: ServiceProcess, env: Record<string, string>): Promise<void> {
  const receiver = await new Receiver().start();
  try {
    const made = await runCli(['token', 'create', '--name', 'root', '--role', 'admin'], env);
    const admin = await tokenKnown([a.url, b.url], made.stdout.trim().split('\n').pop()!);
    const rule = await send(a.url, 'POST', '/fr/api/event-rules', {
      headers: admin,
      body: { name: 'tags', on: ['tags'], types: ['TagCreated'], target: { url: receiver.url } },
    });
    assert.is(rule.status, 201, rule.text);
    await tags(a.url, 0, 5);
    await tags(b.url, 5, 5);
    await receiver.until((got) => got.length >= 10);
    // Every outcome recorded before the kill: nothing is in flight, so nothing may come twice.
    for (let i = 0; i < 100; i++) {
      const delivered = await send(a.url, 'GET', `/fr/api/event-rules/${rule.body.id}/deliveries?state=delivered`, {
        headers: admin,
      });
      if (delivered.body.items.length === 10) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const statuses = await Promise.all(
      [a, b].map(
        async (one) =>
          (await send(one.url, 'GET', `/fr/api/event-rules/${rule.body.id}/status`, { headers: admin })).body,
      ),
    );
    assert.equal(statuses.map((s) => s.this_instance).sort(), [false, true], 'exactly one instance delivers');
    assert.is(statuses[0].delivering, statuses[1].delivering);
    const [holder, other] = statuses[0].this_instance ? [a, b] : [b, a];
    await holder.kill9();
    await tags(other.url, 10, 10);
    await receiver.until((got) => new Set(got.map((r) => r.position)).size === 20, 40_000);
    const positions = receiver.positions();
    const firsts = positions.filter((position, index) => positions.indexOf(position) === index);
    assert.equal(
      firsts,
      [...firsts].sort((x, y) => x - y),
      'in log order across the takeover',
    );
    assert.is(positions.length, 20, 'nothing twice: nothing was in flight at the kill');
    const after = await send(other.url, 'GET', `/fr/api/event-rules/${rule.body.id}/status`, { headers: admin });
    assert.is(after.body.this_instance, true);
  } finally {
    await receiver.close();
  }
}

test('two processes over one SQLite DATA_DIR: one delivers, the other takes over when it is killed', async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', POLL_INTERVAL_MS: '50' };
  const a = await spawnService(env);
  const b = await spawnService(env);
  try {
    await takeover(a, b, env);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

const url = await mariadbUrl();
if (url) {
  test('two instances over one MariaDB database, each its own DATA_DIR: the lease and cursors are in the database', async () => {
    const database = await freshDatabase(url);
    const shared = {
      EVENT_STORE: 'mariadb',
      MARIADB_URL: database.url,
      CONFIG_SECRET_KEY: randomBytes(32).toString('hex'),
      CONFIG_LOG_SIGNING_KEY: newLogKey(),
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    };
    const first = tempDir();
    const a = await spawnService({ ...shared, DATA_DIR: first });
    const b = await spawnService({ ...shared, DATA_DIR: tempDir() });
    try {
      await takeover(a, b, { ...shared, DATA_DIR: first });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await database.drop();
    }
  });
} else {
  test.skip('two instances over one MariaDB database (no MariaDB reachable)', () => {});
}

test.run();
