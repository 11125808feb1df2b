import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tokenDigest } from '../../src/application/tokens.js';
import { BASE, type Reply, send } from '../support/harness.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';

/**
 * Tokens and Idempotency-Keys across real processes on one SQLite store: the token command while
 * the service runs, revocation seen by another instance, retries across instances and a restart.
 */

interface Ctx {
  dataDir: string;
  env: Record<string, string>;
  a: ServiceProcess;
  b: ServiceProcess;
  tokens: string[];
  outputs: string[];
}

const it = suite<Ctx>('identity across processes: the token command, revocation, retries');

it.before(async (ctx) => {
  ctx.dataDir = tempDir();
  ctx.env = { DATA_DIR: ctx.dataDir, POLL_INTERVAL_MS: '50', ANONYMOUS_ROLE: 'none' };
  ctx.a = await spawnService(ctx.env);
  ctx.b = await spawnService(ctx.env);
  ctx.tokens = [];
  ctx.outputs = [];
});
it.after(async ({ a, b }) => {
  await Promise.all([a.stop(), b.stop()]);
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Asks until the answer has the status wanted (an instance follows the log every 50 ms), for up to 5 s. */
async function eventually(ask: () => Promise<Reply>, status: number): Promise<Reply> {
  const until = Date.now() + 5_000;
  for (;;) {
    const reply = await ask();
    if (reply.status === status || Date.now() > until) return reply;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function tokenCommand(ctx: Ctx, args: string[]) {
  const run = await runCli(['token', ...args], ctx.env);
  ctx.outputs.push(run.stdout, run.stderr);
  return run;
}

it('token create, while two instances run: the token alone on the last line, known to both', async (ctx) => {
  const run = await tokenCommand(ctx, ['create', '--name', 'root', '--role', 'admin']);
  assert.is(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split('\n');
  const token = lines.at(-1)!;
  assert.match(token, /^pmc_[A-Za-z0-9_-]{43}$/);
  ctx.tokens.push(token);
  for (const instance of [ctx.a, ctx.b]) {
    const me = await eventually(() => send(instance.url, 'GET', '/fr/api/whoami', { headers: bearer(token) }), 200);
    assert.equal(me.body, { actor: 'root', role: 'admin', secrets: false });
  }
  const changes = await send(ctx.a.url, 'GET', '/fr/api/changes?resource=tokens', { headers: bearer(token) });
  assert.is(changes.body.items[0].type, 'TokenIssued');
  assert.match(changes.body.items[0].actor, /^cli:/);
});

it('a token issued through one instance works on the other; revoked through it, the other answers 401', async (ctx) => {
  const root = bearer(ctx.tokens[0]);
  const issued = await send(ctx.a.url, 'POST', '/fr/api/tokens', {
    headers: root,
    body: { name: 'ci', role: 'reader' },
  });
  assert.is(issued.status, 201);
  const ci = issued.body.token as string;
  ctx.tokens.push(ci);
  const onB = await eventually(() => send(ctx.b.url, 'GET', `${BASE}/tags`, { headers: bearer(ci) }), 200);
  assert.is(onB.status, 200);
  const revoked = await send(ctx.a.url, 'DELETE', `/fr/api/tokens/${issued.body.item.id}`, { headers: root });
  assert.equal(revoked.body, { id: issued.body.item.id, revoked: true });
  const onA = await send(ctx.a.url, 'GET', `${BASE}/tags`, { headers: bearer(ci) });
  assert.is(onA.status, 401, 'at once on the instance that revoked it');
  const laterOnB = await eventually(() => send(ctx.b.url, 'GET', `${BASE}/tags`, { headers: bearer(ci) }), 401);
  assert.is(laterOnB.status, 401);
  assert.match(laterOnB.body.detail, /revoked/);
});

it('token list and token revoke from the command line; the revoked token answers 401', async (ctx) => {
  const root = bearer(ctx.tokens[0]);
  const issued = await send(ctx.b.url, 'POST', '/fr/api/tokens', {
    headers: root,
    body: { name: 'deploy', role: 'writer', expires_at: '2999-01-01T00:00:00Z' },
  });
  const deploy = issued.body.token as string;
  ctx.tokens.push(deploy);
  const listed = await tokenCommand(ctx, ['list', '--json']);
  const items = JSON.parse(listed.stdout).items as { name: string; revoked_at: string | null }[];
  assert.equal(
    items.map((t) => [t.name, t.revoked_at === null]),
    [
      ['root', true],
      ['ci', false],
      ['deploy', true],
    ],
  );
  assert.not.ok(listed.stdout.includes('digest'));
  const revoked = await tokenCommand(ctx, ['revoke', String(issued.body.item.id)]);
  assert.is(revoked.code, 0, revoked.stderr);
  const refused = await eventually(() => send(ctx.a.url, 'GET', '/fr/api/whoami', { headers: bearer(deploy) }), 401);
  assert.is(refused.status, 401);
  const unknown = await tokenCommand(ctx, ['revoke', '999']);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /does not exist/);
});

it('an Idempotency-Key is honoured by the other instance and after a restart', async (ctx) => {
  const headers = { ...bearer(ctx.tokens[0]), 'Idempotency-Key': 'deploy-42' };
  const body = { libelle: 'retried' };
  const first = await send(ctx.a.url, 'POST', `${BASE}/clients`, { headers, body });
  assert.is(first.status, 201);
  const onB = await send(ctx.b.url, 'POST', `${BASE}/clients`, { headers, body });
  assert.equal([onB.status, onB.text, onB.headers.get('idempotent-replayed')], [201, first.text, 'true']);
  await ctx.a.stop();
  ctx.a = await spawnService(ctx.env);
  const afterRestart = await send(ctx.a.url, 'POST', `${BASE}/clients`, { headers, body });
  assert.equal(
    [afterRestart.status, afterRestart.text, afterRestart.headers.get('idempotent-replayed')],
    [201, first.text, 'true'],
  );
  const other = await send(ctx.a.url, 'POST', `${BASE}/clients`, { headers, body: { libelle: 'changed' } });
  assert.is(other.status, 422);
});

it('no token, nor its SHA-256, is in any file of the data directory or any log line', async (ctx) => {
  const needles = ctx.tokens.flatMap((token) => [token, tokenDigest(token)]);
  const files = readdirSync(ctx.dataDir).map((name) => join(ctx.dataDir, name));
  assert.ok(files.some((f) => f.endsWith('events.sqlite')));
  for (const file of files) {
    const content = readFileSync(file).toString('latin1');
    for (const needle of needles) assert.not.ok(content.includes(needle), `${file} holds a token`);
  }
  const logs = [ctx.a.output(), ctx.b.output(), ...ctx.outputs.slice(1)].join('\n');
  for (const needle of needles) assert.not.ok(logs.includes(needle), 'a log holds a token');
  assert.match(ctx.b.output(), /"actor":"root"/);
});

it.run();
