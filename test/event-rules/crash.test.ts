import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { runCli, spawnService, tempDir } from '../support/process.js';
import { Receiver, tokenKnown } from '../support/receiver.js';

/**
 * At least once, nothing lost (section 15): the process killed with SIGKILL while it delivers, then
 * started again on the same DATA_DIR — the receiver has every change, in log order, and sees twice
 * only the one that was in flight.
 */

const TAGS = 60;

test('kill -9 during deliveries, then a restart: every change, in order, duplicates only of the in-flight one', async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
  let service = await spawnService(env);
  const receiver = await new Receiver().start();
  receiver.behaviour = () => ({ status: 204, delayMs: 15 });
  try {
    const made = await runCli(['token', 'create', '--name', 'root', '--role', 'admin'], { DATA_DIR: dataDir });
    const admin = await tokenKnown([service.url], made.stdout.trim().split('\n').pop()!);
    const rule = await send(service.url, 'POST', '/fr/api/event-rules', {
      headers: admin,
      body: { name: 'tags', on: ['tags'], types: ['TagCreated'], target: { url: receiver.url } },
    });
    assert.is(rule.status, 201);
    for (let i = 0; i < TAGS; i++) {
      const tag = await send(service.url, 'POST', `${BASE}/tags`, {
        body: { name: `t${i}`, color: '#000000', background: '#FFFFFF' },
      });
      assert.is(tag.status, 201);
    }
    await receiver.until((got) => got.length >= 15);
    await service.kill9();
    const beforeKill = receiver.positions();
    service = await spawnService(env);
    await receiver.until((got) => new Set(got.map((r) => r.position)).size === TAGS);
    const changes = await send(service.url, 'GET', '/fr/api/changes?resource=tags&type=TagCreated&limit=1000', {
      headers: admin,
    });
    const expected = changes.body.items.map((item: { position: number }) => item.position);
    const positions = receiver.positions();
    const firsts = positions.filter((position, index) => positions.indexOf(position) === index);
    assert.equal(firsts, expected, 'every change, in log order');
    const twice = positions.length - firsts.length;
    console.log(`  ${beforeKill.length} received before the kill, ${twice} received twice`);
    assert.ok(twice <= 1, `only the in-flight one twice, not ${twice}`);
    if (twice === 1) {
      const again = positions.find((position, index) => positions.indexOf(position) !== index);
      assert.is(again, beforeKill[beforeKill.length - 1], 'the one received twice was the last one in flight');
    }
  } finally {
    await receiver.close();
    await service.stop();
  }
});

test.run();
