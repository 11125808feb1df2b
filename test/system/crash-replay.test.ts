import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE } from '../support/harness.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';

const it = suite('kill -9 in a burst, a restart, more writes, a clean stop: the stored read models equal a rebuild');

/** How many times the sequence runs: each kill lands elsewhere in the burst. */
const RUNS = 6;
const tag = (name: string) => JSON.stringify({ name, color: '#000000', background: '#FFFFFF' });

/** A POST on a connection of its own; 0 when the connection breaks (the process was killed). */
function post(url: string, body: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const headers = { 'content-type': 'application/json' };
    const req = request({ hostname, port, path: `${BASE}/tags`, method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** 200 POSTs, one a millisecond; the process is killed one millisecond after the `killAt`-th is sent. */
async function burstKilled(service: ServiceProcess, killAt: number): Promise<number[]> {
  const sent: Promise<number>[] = [];
  for (let n = 0; n < 200; n++) {
    sent.push(post(service.url, tag(`burst-${n}`)));
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (n === killAt) {
      await service.kill9();
      break;
    }
  }
  return Promise.all(sent);
}

it('replay finds no difference, run after run', async () => {
  const found: string[] = [];
  for (let run = 0; run < RUNS; run++) {
    const dataDir = tempDir();
    const killAt = 60 + Math.floor(Math.random() * 80);
    await burstKilled(await spawnService({ DATA_DIR: dataDir }), killAt);
    const again = await spawnService({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_MS: '100' });
    const more = Array.from({ length: 10 }, (_, n) => post(again.url, tag(`after-${n}`)));
    assert.equal(await Promise.all(more), Array(10).fill(201));
    assert.is(await again.stop(), 0);
    const replay = await runCli(['replay'], { DATA_DIR: dataDir });
    if (replay.code !== 0) found.push(`killed after ${killAt}: ${replay.stdout.slice(0, 1000)}`);
  }
  assert.equal(found, [], 'differences between the stored read models and a rebuild');
});

it.run();
