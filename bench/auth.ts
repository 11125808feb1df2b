// What a bearer token costs a read: GET /tags/{id} with and without Authorization, in alternating
// rounds of the same run (the machine's noise hits both), then the ratio of the medians.
// Usage: npm run bench:auth   (BENCH_REQUESTS, BENCH_ROUNDS, BENCH_CONCURRENCY override the defaults)
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { start } from '../src/main.js';
import { measure, scratchDir } from './lib.js';

const total = Number(process.env.BENCH_REQUESTS ?? 4000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const dataDir = scratchDir('pmacontrol-bench-');
const running = await start(
  loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', ANONYMOUS_ROLE: 'reader' }),
  pino({ level: 'silent' }),
);
const caller = { actor: 'bench', requestId: 'bench' };
const { token } = await running.service.write.issueToken(
  { name: 'bench', role: 'reader', secrets: false, expiresAt: null },
  caller,
);
for (let i = 0; i < 100; i++) {
  const input = { name: `t${i}`, color: '#000000', background: '#FFFFFF' };
  await running.service.write.execute({ kind: 'create', resource: 'tags', input }, caller);
}
const base = `http://127.0.0.1:${running.port}/fr/api/config/tags/`;

const read = (headers: Record<string, string>) => async (i: number) => {
  const response = await fetch(base + ((i % 100) + 1), { headers });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET: ${response.status}`);
};

console.log(`node ${process.version}, ${concurrency} concurrent clients, ${rounds} rounds of ${total} reads each way`);
await measure('warm-up', total, concurrency, read({}));
const anonymous: number[] = [];
const bearer: number[] = [];
for (let round = 0; round < rounds; round++) {
  anonymous.push(await measure('GET one, no token', total, concurrency, read({})));
  bearer.push(await measure('GET one, bearer token', total, concurrency, read({ Authorization: `Bearer ${token}` })));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ratio = median(bearer) / median(anonymous);
console.log(
  `median: ${median(anonymous).toFixed(0)} req/s without, ${median(bearer).toFixed(0)} req/s with a token: ` +
    `${ratio.toFixed(3)}× (target ≥ 0.95×)`,
);
await running.close();
