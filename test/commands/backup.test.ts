import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { freshDatabase, mariadbUrl } from '../support/mariadb.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const it = suite('backup and restore: one command each, consistent while serving, checked before anything is written');

const tag = (n: number) => ({ name: `t${n}`, color: '#000000', background: '#FFFFFF' });

/** Writes until stopped; the tags answered 201, by id. */
function writing(url: string) {
  const state = { on: true, made: 0 };
  const done = (async () => {
    while (state.on) {
      const reply = await send(url, 'POST', `${BASE}/tags`, { body: tag(state.made) });
      if (reply.status === 201) state.made++;
    }
  })();
  const stop = async () => {
    state.on = false;
    await done;
  };
  return { state, stop };
}

/** The lists a reader sees, and the service's checkpoint. */
async function served(url: string) {
  const lists: Record<string, unknown> = {};
  for (const resource of ['tags', 'clients', 'environments', 'servers']) {
    lists[resource] = (await send(url, 'GET', `${BASE}/${resource}`)).body.items;
  }
  const checkpoint = await fetch(`${url}/fr/api/log/checkpoint`).then((answer) => answer.text());
  return { lists, checkpoint };
}

/**
 * A service on `env` takes writes while `backup` runs; it is stopped, its state read; `restore` into a
 * new DATA_DIR (and `target`'s store) then serves the same lists and the same checkpoint as the
 * original at the backup's size.
 */
async function roundTrip(env: Record<string, string>, target: Record<string, string>) {
  const dataDir = tempDir();
  const service = await spawnService({ ...env, DATA_DIR: dataDir });
  await send(service.url, 'POST', `${BASE}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'm', passwd: ' kept as sent ' },
  });
  const before = (await send(service.url, 'GET', '/readyz')).body.position as number;
  const writer = writing(service.url);
  while (writer.state.made < 20) await new Promise((resolve) => setTimeout(resolve, 20));
  const dir = join(tempDir(), 'backup');
  const taken = await runCli(['backup', '--to', dir], { ...env, DATA_DIR: dataDir });
  await writer.stop();
  assert.is(taken.code, 0, taken.stdout + taken.stderr);
  const events = Number(/backed up (\d+) events/.exec(taken.stdout)![1]);
  assert.is(statSync(dir).mode & 0o777, 0o700);
  for (const name of readdirSync(dir)) assert.is(statSync(join(dir, name)).mode & 0o777, 0o600, name);
  await service.stop();

  // The original, brought back to the backup's size: what the restored service must serve.
  const checkpointThen = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).checkpoint as string;
  const restoredDir = tempDir();
  const restored = await runCli(['restore', '--from', dir], { ...target, DATA_DIR: restoredDir });
  assert.is(restored.code, 0, restored.stdout + restored.stderr);
  const again = await spawnService({ ...target, DATA_DIR: restoredDir });
  try {
    const now = await served(again.url);
    assert.is(now.checkpoint, checkpointThen, 'the restored log signs the checkpoint the backup signed');
    const tags = now.lists.tags as { id: number; name: string }[];
    assert.is(tags.length, events - before, 'every tag of the backup, and none after it');
    const secret = await runCli(['token', 'create', '--name', 'reader', '--role', 'admin', '--secrets'], {
      ...target,
      DATA_DIR: restoredDir,
    });
    assert.is(secret.code, 0, secret.stderr);
    const token = secret.stdout.trim().split('\n').at(-1)!;
    // Issued by the command, the token is known to the service once it has followed the log.
    const reveal = () =>
      send(again.url, 'GET', `${BASE}/servers/1/secret`, { headers: { authorization: `Bearer ${token}` } });
    let password = await reveal();
    for (let i = 0; i < 100 && password.status === 401; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      password = await reveal();
    }
    assert.is(password.status, 200, password.text);
    assert.is(password.body.passwd, ' kept as sent ', 'the secret key came with it: the password opens, byte for byte');
  } finally {
    await again.stop();
  }
  return { dir, restoredDir };
}

it('SQLite: backup while writes go on, restore into an empty DATA_DIR: the same lists and checkpoint', async () => {
  await roundTrip({}, {});
});

it('a backup altered in any way is refused before anything is written', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  for (let n = 0; n < 3; n++) await send(service.url, 'POST', `${BASE}/tags`, { body: tag(n) });
  const dir = join(tempDir(), 'backup');
  assert.is((await runCli(['backup', '--to', dir], { DATA_DIR: dataDir })).code, 0);
  await service.stop();
  const events = join(dir, 'events.ndjson');
  const original = readFileSync(events, 'utf8');
  writeFileSync(events, original.replace('"t1"', '"t9"'));
  const target = tempDir();
  const refused = await runCli(['restore', '--from', dir], { DATA_DIR: target });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /refused: events\.ndjson: its SHA-256 is not the manifest's/);
  assert.equal(readdirSync(target), [], 'nothing written');
  writeFileSync(events, original);
  const notEmpty = await runCli(['restore', '--from', dir], { DATA_DIR: dataDir });
  assert.is(notEmpty.code, 1);
  assert.match(notEmpty.stderr, /is not empty/);
  const fine = await runCli(['restore', '--from', dir], { DATA_DIR: target });
  assert.is(fine.code, 0, fine.stderr);
  assert.ok(existsSync(join(target, 'events.sqlite')));
});

const url = await mariadbUrl();
if (url) {
  it('MariaDB: backup while serving, restore into a database that does not exist yet', async () => {
    const source = await freshDatabase(url);
    const target = await freshDatabase(url);
    await target.drop(); // restore makes it
    try {
      await roundTrip(
        { EVENT_STORE: 'mariadb', MARIADB_URL: source.url },
        { EVENT_STORE: 'mariadb', MARIADB_URL: target.url },
      );
    } finally {
      await source.drop();
      await target.drop();
    }
  });
} else {
  it.skip('MariaDB: backup and restore (no MariaDB reachable)', () => {});
}

it.run();
