import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';

const it = suite<{ service: ServiceProcess; port: number }>('slow and idle clients cannot hold the service');
it.before(async (ctx) => {
  ctx.service = await spawnService({
    DATA_DIR: tempDir(),
    MAX_CONNECTIONS: '20',
    MAX_CONNECTIONS_PER_CLIENT: '20',
    HEADERS_TIMEOUT_MS: '1000',
    REQUEST_TIMEOUT_MS: '2000',
  });
  ctx.port = Number(new URL(ctx.service.url).port);
});
it.after(async ({ service }) => {
  await service.stop();
});

interface Watched {
  socket: Socket;
  received: string;
  closed: Promise<void>;
}

function open(port: number): Promise<Watched> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const watched: Watched = {
      socket,
      received: '',
      closed: new Promise((done) => socket.once('close', () => done())),
    };
    socket.on('data', (chunk) => {
      watched.received += chunk.toString();
    });
    socket.on('error', () => {});
    socket.once('connect', () => resolve(watched));
  });
}

/** Writes `piece` every 200 ms, at most `times` times, until the server closes the connection. */
async function drip(watched: Watched, piece: string, times: number): Promise<number> {
  let open = true;
  void watched.closed.then(() => {
    open = false;
  });
  let sent = 0;
  while (open && sent < times) {
    watched.socket.write(piece);
    sent += 1;
    await new Promise((r) => setTimeout(r, 200));
  }
  return sent;
}

it('connections above MAX_CONNECTIONS are refused at once; idle ones are closed after the header timeout', async ({
  service,
  port,
}) => {
  const idle = await Promise.all(Array.from({ length: 30 }, () => open(port)));
  await Promise.all(idle.map((w) => w.closed));
  const timedOut = idle.filter((w) => w.received.startsWith('HTTP/1.1 408'));
  assert.is(timedOut.length, 20, 'the 20 admitted idle connections got a 408 and were closed');
  const reply = await send(service.url, 'GET', `${BASE}/environments`);
  assert.is(reply.status, 200);
});

it('a client that sends a header byte every 200 ms is cut off by the header timeout', async ({ port }) => {
  const slow = await open(port);
  slow.socket.write(`GET ${BASE}/tags HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
  const sent = await drip(slow, 'X-Slow: y\r\n', 50);
  assert.ok(sent < 50, 'the connection was closed while the client was still sending headers');
  assert.match(slow.received, /^HTTP\/1\.1 408/);
});

it('a request body sent a few bytes at a time is cut off by the request timeout', async ({ port }) => {
  const slow = await open(port);
  slow.socket.write(
    `POST ${BASE}/tags HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
  );
  const sent = await drip(slow, '          ', 100);
  assert.ok(sent < 100, 'the connection was closed while the client was still sending the body');
  assert.match(slow.received, /^HTTP\/1\.1 408/);
});

it.run();

const perClient = suite('a client at its connection cap displaces its own idle connections');

perClient(
  'silent sockets up to MAX_CONNECTIONS_PER_CLIENT: a request from the same address still gets in',
  async () => {
    const service = await spawnService({
      DATA_DIR: tempDir(),
      MAX_CONNECTIONS: '50',
      MAX_CONNECTIONS_PER_CLIENT: '10',
    });
    const silent: Watched[] = [];
    try {
      const port = Number(new URL(service.url).port);
      silent.push(...(await Promise.all(Array.from({ length: 10 }, () => open(port)))));
      await new Promise((r) => setTimeout(r, 100));
      const health = await fetch(`${service.url}/healthz`, {
        headers: { connection: 'close' },
        signal: AbortSignal.timeout(5000),
      });
      assert.is(health.status, 200);
      await Promise.race([Promise.any(silent.map((w) => w.closed)), new Promise((r) => setTimeout(r, 2000))]);
      const displaced = silent.filter((w) => w.socket.destroyed || w.socket.readyState !== 'open');
      assert.is(displaced.length, 1, 'the idlest of its own silent sockets made room');
    } finally {
      for (const w of silent) w.socket.destroy();
      await service.stop();
    }
  },
);

perClient.run();
