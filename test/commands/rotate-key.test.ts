import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { runCli, type ServiceProcess, spawnService, tempDir } from '../support/process.js';

const it = suite('rotate-key: every secret re-sealed under a new key, as events, reads served throughout');

async function call(service: ServiceProcess, method: string, path: string, body?: object, token?: string) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const reply = await fetch(`${service.url}${path}`, { method, headers, body: body && JSON.stringify(body) });
  return { status: reply.status, body: await reply.json() };
}

async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not reached: ${what}`);
}

/** A server whose password changed once (two versions), an SSH key, and a token that may read secrets. */
async function inventory(service: ServiceProcess, env: Record<string, string>) {
  const body = { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd: 'pw-1' };
  const server = (await call(service, 'POST', `${BASE}/servers`, body)).body.id;
  assert.is((await call(service, 'PATCH', `${BASE}/servers/${server}`, { passwd: 'pw-2' })).status, 200);
  const key = makeKey('ed25519');
  const sshKey = { name: 'k', user: 'root', public_key: key.publicKey, private_key: key.privateKey };
  assert.is((await call(service, 'POST', `${BASE}/ssh-keys`, sshKey)).status, 201);
  const issued = await runCli(['token', 'create', '--name', 'platform', '--role', 'writer', '--secrets'], env);
  return { server, privateKey: key.privateKey, token: issued.stdout.trim().split('\n').pop()! };
}

/** Restarted with the new key: readiness, secrets, the token, the change log, a revert to a version from before. */
async function afterRestart(env: Record<string, string>, server: number, privateKey: string, token: string) {
  const restarted = await spawnService(env);
  try {
    assert.is((await call(restarted, 'GET', '/readyz')).status, 200);
    const secret = (path: string) => call(restarted, 'GET', `${BASE}/${path}/secret`, undefined, token);
    assert.equal(
      (await secret(`servers/${server}`)).body,
      { passwd: 'pw-2' },
      'the token (digest re-sealed) still works',
    );
    assert.is((await secret('ssh-keys/1')).body.private_key.trim(), privateKey.trim());
    const changes = await call(restarted, 'GET', '/fr/api/changes?type=SecretsResealed');
    assert.is(changes.body.items.length, 2, "the server's and the key's; the token's re-seal is for admins");
    assert.is(JSON.stringify(changes.body).includes('v1:'), false, 'sealed values are redacted in the change log');
    const from = Math.min(...changes.body.items.map((item: { position: number }) => item.position)) - 1;
    const across = (await call(restarted, 'GET', `/fr/api/diff?from=${from}`)).body.resources;
    assert.equal([across.servers.updated, across['ssh-keys'].updated], [[], []], 'sealed again, the same secrets');
    const revert = await call(restarted, 'POST', `${BASE}/servers/${server}/revert`, { version: 1 }, token);
    assert.is(revert.status, 200, JSON.stringify(revert.body));
    assert.equal((await secret(`servers/${server}`)).body, { passwd: 'pw-1' }, 'a version sealed before: retired key');
    const version = (await call(restarted, 'GET', `${BASE}/servers/${server}`)).body.item.version;
    assert.is(version, 3, 'created, patched, reverted: the re-seal moved no version');
  } finally {
    await restarted.stop();
  }
}

/** Without the retired key: the current secrets open, an old version's do not (a 409, not a 500); the old key is refused. */
async function withoutRetiredKey(dataDir: string, server: number, token: string, before: string) {
  const env = { DATA_DIR: dataDir };
  rmSync(join(dataDir, 'secret.key.retired'));
  const withoutRetired = await spawnService(env);
  try {
    const revert = await call(withoutRetired, 'POST', `${BASE}/servers/${server}/revert`, { version: 2 }, token);
    assert.equal([revert.status, revert.body.code], [409, 'conflict']);
    assert.match(revert.body.detail, 'retired key');
  } finally {
    await withoutRetired.stop();
  }
  const replayed = await runCli(['replay'], env);
  assert.equal([replayed.code, replayed.stdout.includes('read models match the log')], [0, true], replayed.stdout);
  const oldKey = await runCli(['token', 'list'], { DATA_DIR: dataDir, CONFIG_SECRET_KEY: before });
  assert.is.not(oldKey.code, 0);
  assert.match(oldKey.stderr, 'does not match the key the data was sealed under');
}

it('DATA_DIR keys: the running instance keeps serving reads, refuses writes; after a restart everything opens', async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir };
  const running = await spawnService(env);
  const { server, privateKey, token } = await inventory(running, env);
  const before = readFileSync(join(dataDir, 'secret.key'), 'utf8').trim();
  const next = randomBytes(32).toString('hex');
  try {
    const rotated = await runCli(['rotate-key', '--new-key', next], env);
    assert.is(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, 're-sealed 3 secrets of 3 entries');
    const rotatedAway = async () => {
      const ready = await call(running, 'GET', '/readyz');
      return ready.status === 503 && String(ready.body.reason).includes('rotated');
    };
    await until(rotatedAway, 'readyz 503 on the old instance, saying the key was rotated');
    assert.is((await call(running, 'GET', `${BASE}/servers/${server}`)).status, 200, 'reads go on');
    const refused = await call(running, 'PATCH', `${BASE}/servers/${server}`, { port: 3307 });
    assert.equal([refused.status, refused.body.code], [503, 'unavailable']);
  } finally {
    await running.stop();
  }
  assert.is(readFileSync(join(dataDir, 'secret.key'), 'utf8').trim(), next);
  assert.is(readFileSync(join(dataDir, 'secret.key.retired'), 'utf8').trim(), before);
  for (const file of ['secret.key', 'secret.key.retired']) assert.is(statSync(join(dataDir, file)).mode & 0o777, 0o600);

  await afterRestart(env, server, privateKey, token);
  await withoutRetiredKey(dataDir, server, token, before);
});

it('CONFIG_SECRET_KEY: told what to set; the new key with the old one retired opens everything', async () => {
  const [first, next] = [randomBytes(32).toString('hex'), randomBytes(32).toString('base64')];
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir, CONFIG_SECRET_KEY: first };
  const running = await spawnService(env);
  const { server, token } = await inventory(running, env);
  await running.stop();
  const rotated = await runCli(['rotate-key', '--new-key', next], env);
  assert.is(rotated.code, 0, rotated.stderr);
  assert.match(rotated.stdout, 'CONFIG_RETIRED_SECRET_KEYS');
  assert.not.ok(rotated.stdout.includes(first) || rotated.stdout.includes(next), 'a key is printed');
  const again = await runCli(['rotate-key', '--new-key', next], { ...env, CONFIG_SECRET_KEY: next });
  assert.is(again.code, 2, 'the current key is no new key');
  const restarted = await spawnService({
    DATA_DIR: dataDir,
    CONFIG_SECRET_KEY: next,
    CONFIG_RETIRED_SECRET_KEYS: first,
  });
  try {
    const read = await call(restarted, 'GET', `${BASE}/servers/${server}/secret`, undefined, token);
    assert.equal(read.body, { passwd: 'pw-2' });
  } finally {
    await restarted.stop();
  }
});

it.run();
