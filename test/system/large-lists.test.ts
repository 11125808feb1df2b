import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { BASE, send } from '../support/harness.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';

const SERVERS = 50_000;
const it = suite<{ service: ServiceProcess }>('large lists: bounded memory, no stall for other requests');

/** Appends SERVERS server creations to the log of a stopped service, as its own appends would. */
async function seed(dataDir: string): Promise<void> {
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  let revision = (await store.readStream(CONFIG_STREAM)).length - 1;
  for (let first = 1; first <= SERVERS; first += 1000) {
    const events = Array.from({ length: 1000 }, (_, i) => {
      const id = first + i;
      const data = {
        id,
        id_client: 99,
        id_environment: 1,
        name: `db-${id}`,
        display_name: `db-${id}`,
        ip: `10.${id >> 16}.${(id >> 8) & 255}.${id & 255}`,
        port: 3306,
        hostname: '',
        login: 'pmacontrol',
        passwd: 'v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAA==:AAAA',
        database: 'mysql',
        is_ssl: false,
        ssh_nat: '',
        ssh_port: 22,
        ssh_login: '',
        is_sudo: false,
        is_root: true,
        is_monitored: true,
        is_proxy: false,
        is_vip: false,
        is_acknowledged: 0,
        tags: [],
      };
      const metadata = {
        actor: 'seed',
        request_id: `seed-${id}`,
        at: '2026-01-01T00:00:00.000Z',
        entry: `server-${id}`,
      };
      return { type: 'ServerCreated', data, metadata };
    });
    revision = (await store.append(CONFIG_STREAM, events, revision)).nextRevision;
  }
  await store.close();
}

const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** Downloads a URL, pausing 10 ms every `bytesPerTick` bytes; resolves with the byte count and the transfer encoding. */
function slowDownload(url: string, bytesPerTick: number): Promise<{ bytes: number; encoding?: string }> {
  return new Promise((resolve, reject) => {
    request(url, (response) => {
      let total = 0;
      response.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total % bytesPerTick < chunk.length) {
          response.pause();
          setTimeout(() => response.resume(), 10);
        }
      });
      response.on('end', () => resolve({ bytes: total, encoding: response.headers['transfer-encoding'] }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

it.before(async (context) => {
  const dataDir = tempDir();
  const first = await spawnService({ DATA_DIR: dataDir });
  await first.stop();
  await seed(dataDir);
  context.service = await spawnService({ DATA_DIR: dataDir });
});

it.after(async ({ service }) => {
  await service.stop();
});

it(`ten concurrent lists of ${SERVERS} servers are streamed: memory stays bounded, single reads go on`, async ({
  service,
}) => {
  const single = await send(service.url, 'GET', `${BASE}/servers/${SERVERS}`);
  assert.is(single.body.item.name, `db-${SERVERS}`);
  const baseline = rss(service.child.pid!);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss(service.child.pid!));
  }, 20);
  const lists = Array.from({ length: 10 }, () => slowDownload(`${service.url}${BASE}/servers`, 1 << 20));
  const read = await send(service.url, 'GET', `${BASE}/servers/1`);
  assert.is(read.status, 200, 'a single read is served while the lists are');
  const downloads = await Promise.all(lists);
  clearInterval(sampler);
  const sizes = downloads.map((d) => d.bytes);
  assert.ok(sizes.every((size) => size === sizes[0] && size > SERVERS * 400));
  // The first list after a change is streamed piece by piece, never built whole before it is sent;
  // it keeps what it sent, and the lists asked for later are sent from that (Content-Length).
  assert.is(downloads[0].encoding, 'chunked', 'a large list is streamed piece by piece');
  assert.ok(downloads.every((d) => d.encoding === 'chunked' || d.encoding === undefined));
  const growth = (peak - baseline) / 2 ** 20;
  assert.ok(
    growth < 200,
    `memory grew by ${growth.toFixed(0)} MiB for ten lists of ${(sizes[0] / 2 ** 20).toFixed(0)} MiB`,
  );
  const again = await send(service.url, 'GET', `${BASE}/servers`);
  assert.is(again.headers.get('content-length'), String(sizes[0]), 'sent from the ready list');
  await send(service.url, 'PATCH', `${BASE}/servers/1`, { body: { port: 3307 } });
  const changed = await send(service.url, 'GET', `${BASE}/servers`);
  assert.is(changed.body.items[0].port, 3307, 'a change makes a new list');
  const whole = await send(service.url, 'GET', `${BASE}/servers?offset=${SERVERS - 2}`);
  assert.equal([whole.body.total, whole.body.items.length], [SERVERS, 2]);
});

/** Downloads a URL as fast as its bytes come; `onFirstBytes` runs at the first chunk. Resolves with the byte count. */
function fastDownload(url: string, onFirstBytes: () => void): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, (response) => {
      let total = 0;
      response.on('data', (chunk: Buffer) => {
        if (total === 0) onFirstBytes();
        total += chunk.length;
      });
      response.on('end', () => resolve(total));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

// A client that reads as fast as the bytes come never makes the socket push back: the list must
// still be made a piece per turn of the event loop, or every other request waits for all of it.
it('a list read by a fast client leaves room, between its pieces, for the requests that come meanwhile', async ({
  service,
}) => {
  await send(service.url, 'PATCH', `${BASE}/servers/2`, { body: { port: 3308 } }); // the next list is made anew
  const answered: string[] = [];
  let single: Promise<unknown> | undefined;
  const list = fastDownload(`${service.url}${BASE}/servers`, () => {
    single = send(service.url, 'GET', `${BASE}/servers/3`).then((read) => {
      answered.push(`single read ${read.status}`);
    });
  });
  const bytes = await list;
  answered.push('list');
  await single;
  assert.ok(bytes > SERVERS * 400, `the whole list came (${bytes} bytes)`);
  assert.equal(answered, ['single read 200', 'list'], 'the single read was answered before the list was whole');
});

it.run();
