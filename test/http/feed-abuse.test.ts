import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';

const it = suite('clients that do not read, or hold connections: the service stays up and answers');

const STREAM = '/fr/api/changes/stream';

/** A raw connection from `localAddress` (any 127.x.y.z is this machine), that sends `request` and never reads. */
function silent(url: string, request: string, localAddress = '127.0.0.1'): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress });
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.pause();
      socket.write(request);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

const feedRequest = (query = '') => `GET ${STREAM}${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

async function metric(url: string, name: string): Promise<number> {
  const text = (await send(url, 'GET', '/metrics')).text;
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

async function until(check: () => Promise<boolean>, what: string, seconds = 30): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out: ${what}`);
}

it('a feed client that stops reading is cut off past its buffer bound; the service lives on', async () => {
  const service = await spawnService({
    DATA_DIR: tempDir(),
    FEED_MAX_BUFFER_BYTES: String(64 * 1024),
    FEED_KEEP_ALIVE_MS: '200',
  });
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 3; i++) sockets.push(await silent(service.url, feedRequest()));
    await until(async () => (await metric(service.url, 'pmacontrol_feed_clients')) === 3, 'three live clients');
    // About 6 MB of changes: more than the kernel's buffers take for a client that does not read.
    const made = await send(service.url, 'POST', `${BASE}/clients`, { body: { libelle: 'flood' } });
    const logo = 'x'.repeat(240);
    let n = 0;
    const patch = async () => {
      while (n < 6000) {
        const body = { logo: `${n++}${logo}` };
        await send(service.url, 'PATCH', `${BASE}/clients/${made.body.id}`, { body });
      }
    };
    await Promise.all(Array.from({ length: 8 }, patch));
    await until(async () => (await metric(service.url, 'pmacontrol_feed_clients')) === 0, 'the three cut off');
    assert.is((await send(service.url, 'GET', '/healthz')).status, 200, 'alive');
    await new Promise((resolve) => setTimeout(resolve, 600)); // three keep-alive periods
    assert.is((await send(service.url, 'GET', '/healthz')).status, 200, 'still alive after the keep-alive timers');
    assert.is(service.child.exitCode, null);
  } finally {
    for (const socket of sockets) socket.destroy();
    await service.stop();
  }
});

it('600 connections held from one address, or 600 feed clients from 600: /healthz and a write are answered', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 600; i++) sockets.push(await silent(service.url, '', '127.0.0.2'));
    assert.is((await send(service.url, 'GET', '/healthz')).status, 200, 'idle connections do not lock it');
    for (let i = 0; i < 600; i++) {
      const address = `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
      sockets.push(await silent(service.url, feedRequest(), address));
    }
    assert.is((await send(service.url, 'GET', '/healthz')).status, 200, 'feed clients do not lock it');
    const tag = await send(service.url, 'POST', `${BASE}/tags`, {
      body: { name: 'through', color: '#000000', background: '#FFFFFF' },
    });
    assert.is(tag.status, 201);
    assert.ok((await metric(service.url, 'pmacontrol_feed_clients')) <= 128, 'the feed has its own cap');
    const refused = await send(service.url, 'GET', STREAM);
    assert.equal([refused.status, refused.body.code], [503, 'unavailable']);
    assert.ok(refused.headers.get('retry-after'));
  } finally {
    for (const socket of sockets) socket.destroy();
    await service.stop();
  }
});

it.run();
