import { type ChildProcess, spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { ROOT, runCli, spawnService, tempDir } from '../support/process.js';

const it = suite('stops by signal: the drain ends and saves, replay finds no difference');

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `npm start` in a process group of its own (npm, then node exec'd by its shell), as an operator runs it. */
async function npmStart(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SHUTDOWN_DRAIN_MS: '300', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let waited = 0; waited < 30_000; waited += 50) {
    const line = output.split('\n').find((l) => l.includes('"msg":"listening"'));
    if (line) return { url: `http://127.0.0.1:${JSON.parse(line).port}`, child, output: () => output };
    if (child.exitCode !== null) break;
    await pause(50);
  }
  throw new Error(`npm start did not listen:\n${output}`);
}

/** The signal to the whole process group, as a service manager or a terminal's Ctrl-C sends it; waits for the end. */
async function signalGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const ended = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, signal);
  await ended;
}

const tag = (name: string) => ({ name, color: '#112233', background: '#FFFFFF' });

/** One write of every kind: creations, changes, deletions (soft and hard), a restore, a revert, a secret. */
async function everyKind(url: string, round: number): Promise<void> {
  const client = await send(url, 'POST', `${BASE}/clients`, { body: { libelle: `Client ${round}` } });
  const t = await send(url, 'POST', `${BASE}/tags`, { body: tag(`every-${round}`) });
  const server = await send(url, 'POST', `${BASE}/servers`, {
    body: {
      id_client: client.body.id,
      id_environment: 1,
      name: `db-${round}`,
      ip: `10.9.${round}.1`,
      login: 'monitor',
      passwd: `pw-${round}`,
      tags: [t.body.id],
    },
  });
  const id = server.body.id;
  await send(url, 'PATCH', `${BASE}/servers/${id}`, { body: { port: 3307, passwd: `pw2-${round}` } });
  await send(url, 'POST', `${BASE}/aliases`, {
    body: { id_mysql_server: id, dns: `db-${round}.example.net`, port: 3306 },
  });
  await send(url, 'DELETE', `${BASE}/servers/${id}`);
  await send(url, 'PATCH', `${BASE}/servers/${id}`, { body: { is_deleted: false } });
  await send(url, 'POST', `${BASE}/servers/${id}/revert`, { body: { version: 1 } });
  await send(url, 'DELETE', `${BASE}/tags/${t.body.id}`);
}

/** Creations as fast as they are answered, until `stop` is set; what the connection loses is not counted. */
function burst(url: string, prefix: string, stop: { now: boolean }): Promise<void> {
  return (async () => {
    for (let i = 0; !stop.now; i++) {
      try {
        await send(url, 'POST', `${BASE}/tags`, { body: tag(`${prefix}-${i}`) });
      } catch {
        return;
      }
    }
  })();
}

it("npm start's group stopped with SIGTERM, after writes of every kind, restarts and a kill -9 mid-burst", async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir };
  let service = await npmStart(env);
  for (let round = 1; round <= 3; round++) await everyKind(service.url, round);
  await signalGroup(service.child, 'SIGTERM');
  service = await npmStart(env);
  const first = { now: false };
  const killed = burst(service.url, 'killed', first);
  await pause(400);
  await signalGroup(service.child, 'SIGKILL');
  first.now = true;
  await killed;
  service = await npmStart(env);
  await everyKind(service.url, 4);
  const last = { now: false };
  const stopped = burst(service.url, 'stopped', last);
  await pause(250);
  await signalGroup(service.child, 'SIGTERM');
  last.now = true;
  await stopped;
  assert.match(service.output(), /"msg":"stopped"/, 'the drain ended and the stores were closed');
  const replay = await runCli(['replay'], env, 120_000);
  assert.is(replay.code, 0, replay.stdout + replay.stderr);
  assert.match(replay.stdout, /read models match the log$/m, 'and they are at its head: nothing left to fold');
});

it('a second SIGTERM during the drain is absorbed: the drain ends, saves, exits 0; a third ends it at once', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_MS: '500' });
  const stop = { now: false };
  const writes = burst(service.url, 'twice', stop);
  await pause(250);
  const exited = new Promise<number | null>((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  await pause(20);
  service.child.kill('SIGTERM');
  assert.is(await exited, 0, service.output().slice(-2000));
  stop.now = true;
  await writes;
  assert.match(service.output(), /already stopping/);
  assert.match(service.output(), /"msg":"stopped"/);
  const replay = await runCli(['replay'], { DATA_DIR: dataDir }, 120_000);
  assert.is(replay.code, 0, replay.stdout + replay.stderr);
  assert.match(replay.stdout, /read models match the log$/m, 'saved up to the head of the log');

  const again = await spawnService({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_MS: '5000' });
  const ended = new Promise<string>((resolve) =>
    again.child.once('exit', (code, signal) => resolve(code === null ? `killed by ${signal}` : `code ${code}`)),
  );
  for (let i = 0; i < 3; i++) {
    again.child.kill('SIGINT');
    await pause(20);
  }
  // How it ended, and its last lines when that is not the exit code 1 the third signal asks for.
  const how = await ended;
  assert.is(how, 'code 1', `the third signal ends it before its 5 s drain:\n${again.output().slice(-1500)}`);
  assert.match(again.output(), /a third signal/);
});

it.run();
