// Change sets (section 17), measured as users run the service (dist/, SQLite store), on an inventory
// of BENCH_CHANGE_SETS_SERVERS servers (10,000 by default) and 100 tags; a change set of 1,000 writes
// (300 servers moved to a new environment, 700 tag links):
//   staging the 1,000 in one request (goal ≥ 1,000 operations/s), beside the same 1,000 writes sent
//   one by one as PATCHes (32 at a time) in the same run;
//   its diff (goal ≤ 500 ms), its merge and its revert (goal ≤ 2 s each), beside those 1,000 PATCHes;
//   a list read with the change set applied (`?id_environment=`, Change-Set: its 300 moved servers)
//   beside the same filter without it (300 servers found too) (goal ≤ 1.5×);
//   PATCHes of other servers for 5 s while a reader lists servers with the change set's header, beside
//   the same load and reader without the header (goal ≥ 0.9×).
// Usage: npm run bench:change-sets
import { percentiles, scratchDir, timedGets } from './lib.js';
import { load, newServer, SERVERS, seed, startService, type Target } from './targets.js';

const SERVERS_COUNT = Number(process.env.BENCH_CHANGE_SETS_SERVERS ?? 10_000);
const MOVED = 300;
const LINKS = 700;

async function call(
  target: Target,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const reply = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await reply.text();
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

/** The inventory: servers 1…N in environment 1, a new environment, 100 tags. */
async function inventory(target: Target): Promise<{ environment: number; tags: number[] }> {
  await seed(target.url, SERVERS_COUNT, (i) => ({ method: 'POST', path: SERVERS, body: newServer(i) }));
  const environment = await call(target, 'POST', '/fr/api/config/environments', {
    libelle: 'prod-2',
    key: 'prod2',
    class: 'info',
    letter: 'Q',
  });
  const tags: number[] = [];
  for (let i = 0; i < 100; i++)
    tags.push(
      (await call(target, 'POST', '/fr/api/config/tags', { name: `t${i}`, color: '#000000', background: '#FFFFFF' }))
        .id,
    );
  return { environment: environment.id, tags };
}

/** The 1,000 writes: 300 servers moved, 700 others given a tag; `offset` picks other servers each time. */
function operations(offset: number, environment: number, tags: number[]) {
  const moved = Array.from({ length: MOVED }, (_, i) => ({
    method: 'PATCH',
    path: `${SERVERS}/${offset + i + 1}`,
    body: { id_environment: environment },
  }));
  const linked = Array.from({ length: LINKS }, (_, i) => ({
    method: 'PATCH',
    path: `${SERVERS}/${offset + MOVED + i + 1}`,
    body: { tags: [tags[i % tags.length]] },
  }));
  return [...moved, ...linked];
}

/** The same writes sent one by one, 32 at a time: the anchor of staging, merging and reverting. */
async function oneByOne(target: Target, ops: { method: string; path: string; body: unknown }[]): Promise<number> {
  const [, ms] = await timed(() => seed(target.url, ops.length, (i) => ops[i]!));
  return ms;
}

async function changeSetRows(target: Target, environment: number, tags: number[]): Promise<string> {
  const anchorMs = await oneByOne(target, operations(2000, environment, tags));
  const id = (await call(target, 'POST', '/fr/api/change-sets', { name: 'bench' })).change_set.id;
  const [, stageMs] = await timed(() =>
    call(target, 'POST', `/fr/api/change-sets/${id}/operations`, { operations: operations(0, environment, tags) }),
  );
  const [, diffMs] = await timed(() => call(target, 'GET', `/fr/api/change-sets/${id}/diff`));
  const header = { 'Change-Set': String(id) };
  // The same filter over 10,000 servers, 300 found in both: the moved ones with the change set, and
  // the first 300 of environment 1 without it.
  const withSet = percentiles(
    await timedGetsWith(target, `${SERVERS}?id_environment=${environment}&limit=300`, header),
  );
  const without = percentiles(await timedGets(target.url, 100, () => `${SERVERS}?id_environment=1&limit=300`));
  const [, mergeMs] = await timed(() => call(target, 'POST', `/fr/api/change-sets/${id}/merge`));
  const [, revertMs] = await timed(() => call(target, 'POST', `/fr/api/change-sets/${id}/revert`));
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  return [
    `staging 1,000 writes in one request   ${ms(stageMs)} (${((1000 / stageMs) * 1000).toFixed(0)} operations/s; goal ≥ 1,000/s)  | anchor: the same 1,000 PATCHes one by one ${ms(anchorMs)}`,
    `diff of the change set                 ${ms(diffMs)} (goal ≤ 500 ms)`,
    `merge                                  ${ms(mergeMs)} (goal ≤ 2 s)  | anchor: 1,000 PATCHes ${ms(anchorMs)}`,
    `revert                                 ${ms(revertMs)} (goal ≤ 2 s)`,
    `list ?id_environment= (300 found) with Change-Set  p50 ${with2(withSet.p50)} p99 ${with2(withSet.p99)}  | without: p50 ${with2(without.p50)} p99 ${with2(without.p99)}  (${(withSet.p50 / without.p50).toFixed(2)}× at p50; goal ≤ 1.5×)`,
  ].join('\n');
}

const with2 = (n: number) => `${n.toFixed(1)} ms`;

async function timedGetsWith(target: Target, path: string, headers: Record<string, string>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < 100; i++) {
    const started = performance.now();
    const reply = await fetch(target.url + path, { headers });
    await reply.arrayBuffer();
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** PATCHes of servers outside the change set for 5 s beside a reader with its header, and beside the same reader without it. */
async function writesBeside(target: Target, environment: number, tags: number[]): Promise<string> {
  const id = (await call(target, 'POST', '/fr/api/change-sets', { name: 'beside' })).change_set.id;
  await call(target, 'POST', `/fr/api/change-sets/${id}/operations`, {
    operations: operations(4000, environment, tags),
  });
  let n = 0;
  const patch = {
    name: 'PATCH',
    method: 'PATCH' as const,
    request: () => ({ path: `${SERVERS}/${6000 + (n++ % 1000)}`, body: { port: 3306 + (n % 2) } }),
  };
  const withReader = async (headers: Record<string, string>) => {
    let reading = true;
    const reader = (async () => {
      while (reading) await call(target, 'GET', `${SERVERS}?limit=10`, undefined, headers);
    })();
    const rps = (await load(target, patch, 5)).rps;
    reading = false;
    await reader;
    return rps;
  };
  // Alternated rounds: the log and its file grow along the run, which alone slows a later round.
  const ratios: number[] = [];
  for (let round = 0; round < 3; round++) {
    const without = await withReader({});
    const beside = await withReader({ 'Change-Set': String(id) });
    ratios.push(beside / without);
  }
  const shown = ratios.map((r) => r.toFixed(2)).join(', ');
  ratios.sort((a, b) => a - b);
  return `PATCH beside a reader with the change set, vs the same reader without it: median of three alternated rounds ${ratios[1]!.toFixed(2)}× (rounds ${shown}; goal ≥ 0.9×)`;
}

const target = await startService(scratchDir('pmacontrol-bench-change-sets-'));
try {
  const { environment, tags } = await inventory(target);
  console.log(await changeSetRows(target, environment, tags));
  console.log(await writesBeside(target, environment, tags));
} finally {
  await target.stop();
}
