// HTTP throughput and latency of the real service on the embedded store (SQLite file, synchronous=FULL).
// Usage: npm run bench   (BENCH_REQUESTS and BENCH_CONCURRENCY override the defaults)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { start } from '../src/main.js';
import { measure } from './lib.js';

const total = Number(process.env.BENCH_REQUESTS ?? 2000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const dataDir = mkdtempSync(join(tmpdir(), 'pmacontrol-bench-'));
const running = await start(
  loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }),
  pino({ level: 'silent' }),
);
const base = `http://127.0.0.1:${running.port}/fr/api/config`;
const json = { 'content-type': 'application/json' };

async function call(method: string, path: string, body?: unknown, expect = 200) {
  const response = await fetch(base + path, {
    method,
    headers: json,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.arrayBuffer();
  if (response.status !== expect) throw new Error(`${method} ${path}: ${response.status}`);
}

console.log(`node ${process.version}, ${concurrency} concurrent clients, SQLite store in ${dataDir}`);
await measure('POST /tags', total, concurrency, (i) =>
  call('POST', '/tags', { name: `bench-${i}`, color: '#000000', background: '#FFFFFF' }, 201),
);
await measure('GET /tags/{id}', total * 5, concurrency, (i) => call('GET', `/tags/${(i % total) + 1}`));
await measure('PATCH /tags/{id}', total, concurrency, (i) =>
  call('PATCH', `/tags/${(i % total) + 1}`, { color: i % 2 ? '#111111' : '#222222' }),
);
await measure(`GET /tags (${total} items)`, 200, concurrency, () => call('GET', '/tags'));
await measure('POST /servers', total / 2, concurrency, (i) =>
  call(
    'POST',
    '/servers',
    {
      id_client: 99,
      id_environment: 1,
      name: `s${i}`,
      ip: `10.${i >> 8}.${i & 255}.1`,
      login: 'pma',
      passwd: 'pw',
      tags: [1, 2],
    },
    201,
  ),
);
await running.close();
