import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { freshDatabase, mariadbUrl } from '../support/mariadb.js';
import { CLI_ARGS, ROOT, runCli, spawnService, tempDir } from '../support/process.js';

const it = suite('one log, never two; a start that cannot listen ends at once');

const storeFile = (dir: string) => JSON.parse(readFileSync(join(dir, 'store.json'), 'utf8'));

/** Runs `serve` until it ends by itself (or is killed after `limitMs`): its exit code, output and time. */
function serveUntilEnd(env: Record<string, string>, limitMs = 20_000) {
  return new Promise<{ code: number | null; output: string; ms: number }>((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], {
      cwd: ROOT,
      env: { ...process.env, HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    });
  });
}

it('a start on the embedded store records it in store.json', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  await service.stop();
  assert.equal(storeFile(dataDir), { event_store: 'sqlite', location: 'events.sqlite' });
});

it('a port taken: the start ends at once with exit 1 and says why', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = String((taken.address() as { port: number }).port);
  try {
    const sqlite = await serveUntilEnd({ DATA_DIR: tempDir(), PORT: port });
    assert.is(sqlite.code, 1, sqlite.output);
    assert.match(sqlite.output, /EADDRINUSE/);
    const url = await mariadbUrl();
    if (url) {
      const database = await freshDatabase(url);
      try {
        const env = { DATA_DIR: tempDir(), PORT: port, EVENT_STORE: 'mariadb', MARIADB_URL: database.url };
        const mariadb = await serveUntilEnd(env);
        assert.is(mariadb.code, 1, `the MariaDB store does not hold the process: ${mariadb.output}`);
        assert.ok(mariadb.ms < 10_000, `${mariadb.ms} ms`);
      } finally {
        await database.drop();
      }
    }
  } finally {
    taken.close();
  }
});

const url = await mariadbUrl();
if (url) {
  it('moved to MariaDB with copy-log: the old store is refused by a start and by every command that writes', async () => {
    const dataDir = tempDir();
    const first = await spawnService({ DATA_DIR: dataDir });
    await send(first.url, 'POST', `${BASE}/tags`, {
      body: { name: 'before', color: '#000000', background: '#FFFFFF' },
    });
    await first.stop();
    const target = await freshDatabase(url);
    await target.drop(); // copy-log makes the database it names
    try {
      const copied = await runCli(['copy-log', '--to', target.url], { DATA_DIR: dataDir });
      assert.is(copied.code, 0, copied.stderr);
      const mariadb = { DATA_DIR: dataDir, EVENT_STORE: 'mariadb', MARIADB_URL: target.url };
      const moved = await spawnService(mariadb);
      const after = await send(moved.url, 'POST', `${BASE}/tags`, {
        body: { name: 'after', color: '#000000', background: '#FFFFFF' },
      });
      assert.is(after.status, 201);
      await moved.stop();
      assert.equal(
        storeFile(dataDir).moved_from.map((s: { event_store: string }) => s.event_store),
        ['sqlite'],
      );

      // A unit file that forgot EVENT_STORE: refused, with the reason, and nothing written there.
      const forgot = await serveUntilEnd({ DATA_DIR: dataDir, PORT: '0' });
      assert.is(forgot.code, 1, forgot.output);
      assert.match(forgot.output, /log moved from the embedded SQLite store to mariadb/);
      assert.is(storeFile(dataDir).event_store, 'mariadb', 'store.json still names MariaDB');
      const token = await runCli(['token', 'create', '--name', 'x', '--role', 'reader'], { DATA_DIR: dataDir });
      assert.is(token.code, 1);
      assert.match(token.stderr, /which its log moved away from/);
      const again = await spawnService(mariadb);
      try {
        const tags = (await send(again.url, 'GET', `${BASE}/tags`)).body.items.map((t: { name: string }) => t.name);
        assert.equal(tags, ['before', 'after']);
      } finally {
        await again.stop();
      }
    } finally {
      await target.drop();
    }
  });
} else {
  it.skip('moved to MariaDB: the old store refused (no MariaDB reachable)', () => {});
}

it.run();
