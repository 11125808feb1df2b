// Approvals (section 16), measured as users run the service (dist/, SQLite store):
//   cost: PATCH throughput with 100 enabled policies that hold nothing (each names `update` on tags,
//         its condition never true) vs the same service with them disabled (alternated rounds, same
//         run; goal ≥ 0.95×)
//   check: the policy check alone (src/domain/approvals/policy.ts: the subjects of a PATCH's event,
//         then the policies that hold it) with 1,000 enabled policies, per call, beside the anchor of
//         the same call with none (goal p99 ≤ 0.2 ms)
//   list: 10,000 pending approvals, `GET /fr/api/approvals?state=pending` (first page, a page from the
//         middle, and `?state=rejected`, which matches none: every approval read) p50/p99, beside
//         `GET /fr/api/whoami` on the same service (goal p99 ≤ 100 ms)
// Usage: npm run bench:approvals   (BENCH_APPROVALS_ONLY=cost,check,list: those rows only)
import { spawnSync } from 'node:child_process';
import { catching, subjectsOf } from '../src/domain/approvals/policy.js';
import { evolve } from '../src/domain/evolve.js';
import { emptyState } from '../src/domain/state.js';
import { percentiles, scratchDir, timedGets } from './lib.js';
import { load, seed, startService, type Target } from './targets.js';

const ONLY = (process.env.BENCH_APPROVALS_ONLY ?? 'cost,check,list').split(',');
const TAGS = 100;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function token(dataDir: string, name: string, role: string): string {
  const made = spawnSync(process.execPath, ['dist/src/cli.js', 'token', 'create', '--name', name, '--role', role], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
  });
  return made.stdout.toString().trim().split('\n').pop()!;
}

async function call(target: Target, method: string, path: string, body: unknown, bearer?: string) {
  const reply = await fetch(`${target.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await reply.text();
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const color = (n: number) => `#${(n % 0xffffff).toString(16).padStart(6, '0')}`;
const tagBody = (i: number) => ({ name: `t${i}`, color: '#000000', background: '#FFFFFF' });

/** `count` policies that name update on tags and never hold (a name no tag has). */
function neverHolding(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    name: `never-${i}`,
    operations: ['update'],
    resources: ['tags'],
    where: [{ field: 'name', eq: `no-such-tag-${i}` }],
    approvals: 1,
    approvers: { roles: ['admin'] },
  }));
}

async function costRun(): Promise<void> {
  const dataDir = scratchDir('pmacontrol-bench-approvals-');
  const target = await startService(dataDir);
  try {
    const admin = token(dataDir, 'bench', 'admin');
    await pause(1500);
    const ids: number[] = [];
    for (let i = 0; i < TAGS; i++) ids.push((await call(target, 'POST', '/fr/api/config/tags', tagBody(i))).id);
    const policies: number[] = [];
    for (const body of neverHolding(100))
      policies.push((await call(target, 'POST', '/fr/api/policies', body, admin)).id);
    const setAll = async (enabled: boolean) => {
      for (const id of policies) await call(target, 'PATCH', `/fr/api/policies/${id}`, { enabled }, admin);
    };
    let n = 0;
    const patch = {
      name: 'PATCH',
      method: 'PATCH' as const,
      request: () => ({ path: `/fr/api/config/tags/${ids[n % TAGS]}`, body: { background: color(++n) } }),
    };
    const ratios: number[] = [];
    for (let round = 0; round < 3; round++) {
      await setAll(false);
      const without = (await load(target, patch, 5)).rps;
      await setAll(true);
      const withPolicies = (await load(target, patch, 5)).rps;
      ratios.push(withPolicies / without);
      console.log(
        `PATCH, 100 policies holding nothing  round ${round + 1}: ${withPolicies.toFixed(0)} req/s  vs  ${without.toFixed(0)} req/s with them disabled  (${(withPolicies / without).toFixed(2)}×)`,
      );
    }
    ratios.sort((a, b) => a - b);
    console.log(
      `PATCH, 100 policies holding nothing  median ${ratios[1].toFixed(2)}× of the same run without (goal ≥ 0.95×)`,
    );
  } finally {
    await target.stop();
  }
}

/** A state with `count` enabled policies on tags' updates that never hold, and 100 tags. */
function stateWith(count: number) {
  const state = emptyState();
  let revision = 0;
  const at = '2026-11-29T00:00:00.000Z';
  const fold = (type: string, data: Record<string, unknown>) =>
    evolve(state, { type, data, revision: revision++, metadata: { actor: 'bench', request_id: 'b', at, schema: 2 } });
  for (let i = 1; i <= TAGS; i++) fold('TagCreated', { id: i, ...tagBody(i) });
  for (const [i, policy] of neverHolding(count).entries())
    fold('PolicyCreated', {
      id: i + 1,
      name: policy.name,
      enabled: true,
      operations: policy.operations,
      resources: policy.resources,
      where: policy.where,
      approvals: 1,
      approver_roles: ['admin'],
      approver_tokens: [],
      ttl: 'PT4H',
    });
  return state;
}

function checkTimes(count: number, calls: number): number[] {
  const state = stateWith(count);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const event = { type: 'TagUpdated', data: { id: (i % TAGS) + 1, changes: { background: color(i) } } };
    const started = performance.now();
    const held = catching(state, 'update', subjectsOf([event], state));
    times.push(performance.now() - started);
    if (held.length > 0) throw new Error('a policy held a change it should not');
  }
  return times;
}

function checkRun(): void {
  const calls = 50_000;
  checkTimes(1000, 5000); // warm-up
  const anchor = percentiles(checkTimes(0, calls));
  const measured = percentiles(checkTimes(1000, calls));
  const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
  console.log(
    `policy check, 1,000 policies   p50 ${us(measured.p50)}  p99 ${us(measured.p99)}  (goal p99 ≤ 200 µs)  | no policy: p50 ${us(anchor.p50)}  p99 ${us(anchor.p99)}`,
  );
}

async function listRun(): Promise<void> {
  const dataDir = scratchDir('pmacontrol-bench-approvals-');
  const target = await startService(dataDir);
  try {
    const admin = token(dataDir, 'bench', 'admin');
    await pause(1500);
    await call(
      target,
      'POST',
      '/fr/api/policies',
      { name: 'tags', operations: ['delete'], approvers: { roles: ['admin'] } },
      admin,
    );
    const count = 10_000;
    await seed(target.url, count, (i) => ({ method: 'POST', path: '/fr/api/config/tags', body: tagBody(i) }));
    await seed(target.url, count, (i) => ({ method: 'DELETE', path: `/fr/api/config/tags/${i + 1}` }), 32);
    const first = percentiles(await timedGets(target.url, 300, () => '/fr/api/approvals?state=pending'));
    const middle = percentiles(await timedGets(target.url, 300, () => '/fr/api/approvals?state=pending&after=5000'));
    const none = percentiles(await timedGets(target.url, 300, () => '/fr/api/approvals?state=rejected'));
    const anchor = percentiles(await timedGets(target.url, 300, () => '/fr/api/whoami'));
    const ms = (p: { p50: number; p99: number }) => `p50 ${p.p50.toFixed(1)} ms  p99 ${p.p99.toFixed(1)} ms`;
    console.log(`approvals ?state=pending, 10,000 pending, first page    ${ms(first)}  (goal p99 ≤ 100 ms)`);
    console.log(`approvals ?state=pending, 10,000 pending, after=5000    ${ms(middle)}`);
    console.log(`approvals ?state=rejected (none: every one read)   ${ms(none)}`);
    console.log(`anchor: GET /fr/api/whoami on the same service          ${ms(anchor)}`);
  } finally {
    await target.stop();
  }
}

if (ONLY.includes('check')) checkRun();
if (ONLY.includes('cost')) await costRun();
if (ONLY.includes('list')) await listRun();
