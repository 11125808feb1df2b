import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import Database from '../../src/sqlite/driver.js';
import { freshDatabase, mariadbUrl } from '../support/mariadb.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

/**
 * `pmacontrol-config verify` on the real process's log: a checkpoint kept, the service stopped, its
 * log altered on copies (one byte of an event, an event deleted, two events swapped) → exit 1 naming
 * the position; unaltered → 0, also once the log has grown past the checkpoint. On SQLite and on
 * MariaDB; and two instances over one log serve the same checkpoint.
 */

const it = suite('verify: the log checked against its tree and the checkpoints kept');

const TAGS = '/fr/api/config/tags';
const tag = (i: number) => ({ name: `tag-${i}`, color: '#112233', background: '#FFFFFF' });
/** The server made after the 20 tags (revision 29, position 30): its password is sealed in its event. */
const SERVER = { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'm', passwd: 'sealed-here' };

async function post(url: string, path: string, body: unknown): Promise<void> {
  const answer = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.is(answer.status, 201, await answer.text());
}

async function checkpoint(url: string, dir: string, name: string): Promise<string> {
  const answer = await fetch(`${url}/fr/api/log/checkpoint`);
  assert.is(answer.status, 200);
  const file = join(dir, name);
  writeFileSync(file, await answer.text());
  return file;
}

/** A log of 20 tag creations after the genesis, a checkpoint kept at its end; the service stopped. */
async function keptLog(env: Record<string, string>) {
  const dataDir = tempDir();
  const service = await spawnService({ ...env, DATA_DIR: dataDir });
  try {
    for (let i = 0; i < 20; i++) await post(service.url, TAGS, tag(i));
    await post(service.url, '/fr/api/config/servers', SERVER);
    const kept = await checkpoint(service.url, tempDir(), 'checkpoint.txt');
    return { dataDir, kept, size: Number((await fetch(`${service.url}/readyz`).then((r) => r.json())).position) };
  } finally {
    await service.stop();
  }
}

type Alteration = 'byte' | 'delete' | 'swap' | 'move';
/** What each alteration does to events at revisions 14 and 15 (positions 15 and 16). */
const ALTERATIONS: Record<Alteration, { position: number; statements: string[] }> = {
  byte: { position: 15, statements: ["UPDATE {events} SET data = REPLACE(data, 'tag-', 'tag_') WHERE revision = 14"] },
  delete: { position: 15, statements: ['DELETE FROM {events} WHERE revision = 14'] },
  swap: {
    position: 15,
    statements: [
      'UPDATE {events} SET revision = 1000000 WHERE revision = 14',
      'UPDATE {events} SET revision = 14 WHERE revision = 15',
      'UPDATE {events} SET revision = 15 WHERE revision = 1000000',
    ],
  },
  // Two events that change places in the log, each keeping its stream and revision.
  move: {
    position: 15,
    statements: [
      'UPDATE {events} SET position = 1000000 WHERE revision = 14',
      'UPDATE {events} SET position = 15 WHERE revision = 15',
      'UPDATE {events} SET position = 16 WHERE revision = 14',
    ],
  },
};

/** The sealed password in the server's event (revision 29) with one character changed. */
const resealed = (data: string) =>
  data.replace(/("passwd":")(.)/, (_, head: string, first: string) => `${head}${first === 'A' ? 'B' : 'A'}`);

async function verify(env: Record<string, string>, ...checkpoints: string[]) {
  return runCli(['verify', ...checkpoints.flatMap((file) => ['--checkpoint', file])], env, 60_000);
}

it('SQLite: an untouched log verifies; a byte changed, an event deleted or two swapped fail at their position', async () => {
  const { dataDir, kept, size } = await keptLog({});
  assert.ok(size > 20);
  const clean = await verify({ DATA_DIR: dataDir }, kept);
  assert.is(clean.code, 0, clean.stdout + clean.stderr);
  assert.match(clean.stdout, /ok {3}.*checkpoint\.txt: size \d+: the log extends it/);
  assert.match(clean.stderr, /verify: \d+\/\d+/, 'progress on stderr');
  for (const [name, { position, statements }] of Object.entries(ALTERATIONS)) {
    const copy = tempDir();
    cpSync(dataDir, copy, { recursive: true });
    const db = new Database(join(copy, 'events.sqlite'));
    for (const statement of statements) db.prepare(statement.replace('{events}', 'events')).run();
    db.close();
    const result = await verify({ DATA_DIR: copy }, kept);
    assert.is(result.code, 1, `${name}: ${result.stdout}`);
    assert.match(result.stdout, /FAIL .*checkpoint\.txt/, name);
    assert.match(
      result.stdout,
      new RegExp(`first position that differs is ${position}\\b`),
      `${name}: ${result.stdout}`,
    );
  }
});

it('SQLite: a changed sealed value, and an event that cannot be read, fail at their position', async () => {
  const { dataDir, kept } = await keptLog({});
  const sealed = tempDir();
  cpSync(dataDir, sealed, { recursive: true });
  const db = new Database(join(sealed, 'events.sqlite'));
  const { data } = db.prepare<[], { data: string }>('SELECT data FROM events WHERE revision = 29').get()!;
  db.prepare('UPDATE events SET data = ? WHERE revision = 29').run(resealed(data));
  db.close();
  const changed = await verify({ DATA_DIR: sealed }, kept);
  assert.is(changed.code, 1, changed.stdout);
  // Only the sealed value changed: the read models redact it, so the group of 16 it is in is named.
  assert.match(changed.stdout, /first position that differs is between 17 and 30\b/, changed.stdout);
  const broken = tempDir();
  cpSync(dataDir, broken, { recursive: true });
  const bad = new Database(join(broken, 'events.sqlite'));
  bad.prepare("UPDATE events SET data = '{not json' WHERE revision = 14").run();
  bad.close();
  const unreadable = await verify({ DATA_DIR: broken }, kept);
  assert.is(unreadable.code, 1, unreadable.stdout + unreadable.stderr);
  assert.match(unreadable.stdout, /FAIL the log: the event at position 15 cannot be read/);
});

it('a copy of the log, without the DATA_DIR, given the public key: read without writing', async () => {
  const { dataDir, kept } = await keptLog({});
  const copy = tempDir();
  cpSync(join(dataDir, 'events.sqlite'), join(copy, 'events.sqlite'));
  const publicKey = join(tempDir(), 'public-key.txt');
  const service = await spawnService({ DATA_DIR: dataDir });
  writeFileSync(publicKey, await fetch(`${service.url}/fr/api/log/public-key`).then((r) => r.text()));
  await service.stop();
  const before = readFileSync(join(copy, 'events.sqlite'));
  const nowhere = { DATA_DIR: join(tempDir(), 'none') };
  const args = ['verify', '--from', `sqlite:${join(copy, 'events.sqlite')}`, '--public-key', publicKey];
  const clean = await runCli([...args, '--checkpoint', kept], nowhere, 60_000);
  assert.is(clean.code, 0, clean.stdout + clean.stderr);
  assert.match(clean.stdout, /ok {3}.*checkpoint\.txt/);
  assert.ok(readFileSync(join(copy, 'events.sqlite')).equals(before), 'the copy is as it was');
  assert.equal(readdirSync(copy), ['events.sqlite'], 'nothing written beside it');
  const moved = new Database(join(copy, 'events.sqlite'));
  for (const statement of ALTERATIONS.move.statements) moved.prepare(statement.replace('{events}', 'events')).run();
  moved.close();
  const found = await runCli([...args, '--checkpoint', kept], nowhere, 60_000);
  assert.is(found.code, 1, found.stdout);
  assert.match(found.stdout, /position 15 holds the event of revision 15/);
  const missing = await runCli(
    ['verify', '--from', `sqlite:${join(copy, 'events.sqlite')}`, '--public-key', `${publicKey}.gone`],
    nowhere,
  );
  assert.is(missing.code, 2, 'a missing key file is a usage error');
});

it('SQLite: an event changed with the record the read models keep of it is placed within its group of 16', async () => {
  const { dataDir, kept } = await keptLog({});
  const events = new Database(join(dataDir, 'events.sqlite'));
  events.prepare("UPDATE events SET data = REPLACE(data, 'tag-', 'tag_') WHERE revision = 18").run();
  events.close();
  const models = new Database(join(dataDir, 'read-models.sqlite'));
  models.prepare("UPDATE changes SET data = REPLACE(data, 'tag-', 'tag_') WHERE position = 19").run();
  models.close();
  const result = await verify({ DATA_DIR: dataDir }, kept);
  assert.is(result.code, 1, result.stdout);
  assert.match(result.stdout, /FAIL .*checkpoint\.txt: .*the first position that differs is between 17 and (\d+)/);
});

it('SQLite: a checkpoint kept earlier still verifies once the log has grown; a forged one does not', async () => {
  const { dataDir, kept } = await keptLog({});
  const service = await spawnService({ DATA_DIR: dataDir });
  let later: string;
  try {
    for (let i = 20; i < 30; i++) await post(service.url, TAGS, tag(i));
    later = await checkpoint(service.url, tempDir(), 'later.txt');
    const whileServing = await verify({ DATA_DIR: dataDir }, kept, later);
    assert.is(whileServing.code, 0, `while the service runs: ${whileServing.stdout}${whileServing.stderr}`);
  } finally {
    await service.stop();
  }
  const both = await verify({ DATA_DIR: dataDir }, kept, later);
  assert.is(both.code, 0, both.stdout);
  const forged = join(tempDir(), 'forged.txt');
  writeFileSync(
    forged,
    readFileSync(kept, 'utf8').replace(/\n(\d+)\n/, (_, n) => `\n${Number(n) - 1}\n`),
  );
  const refused = await verify({ DATA_DIR: dataDir }, forged);
  assert.is(refused.code, 1);
  assert.match(refused.stdout, /FAIL .*forged\.txt: not a checkpoint of this log: the signature .* does not verify/);
});

it('SQLite: two instances over one log serve the same checkpoint at the same size', async () => {
  const dataDir = tempDir();
  const first = await spawnService({ DATA_DIR: dataDir });
  const second = await spawnService({ DATA_DIR: dataDir });
  try {
    for (let i = 0; i < 5; i++) await post(i % 2 ? second.url : first.url, TAGS, tag(i));
    const read = (url: string) => fetch(`${url}/fr/api/log/checkpoint`).then((r) => r.text());
    const deadline = Date.now() + 5000;
    let [a, b] = [await read(first.url), await read(second.url)];
    while (a !== b && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      [a, b] = [await read(first.url), await read(second.url)];
    }
    assert.is(a, b);
  } finally {
    await first.stop();
    await second.stop();
  }
});

/**
 * Each alteration of a MariaDB copy (`name`) fails the checkpoint kept; the copy is put back after
 * each. Without the service's read models, only an event out of its place is named: a changed one
 * fails the checkpoint, and which leaf it is, no root alone can tell.
 */
async function alterEach(
  root: Awaited<ReturnType<typeof createConnection>>,
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<void> {
  const events = `\`${name}\`.pmacontrol_events`;
  await root.query(`CREATE TABLE \`${name}\`.kept AS SELECT * FROM ${events}`);
  const sealedData = (await root.query(`SELECT data FROM ${events} WHERE revision = 29`))[0] as { data: string }[];
  const resealing = `UPDATE {events} SET data = ${root.escape(resealed(sealedData[0].data))} WHERE revision = 29`;
  const cases: [string, string[], number | undefined][] = [
    ['byte', ALTERATIONS.byte.statements, undefined],
    ['delete', ALTERATIONS.delete.statements, 15],
    ['swap', ALTERATIONS.swap.statements, 15],
    ['move', ALTERATIONS.move.statements, 15],
    ['sealed value', [resealing], undefined],
  ];
  for (const [what, statements, position] of cases) {
    for (const statement of statements) await root.query(statement.replace('{events}', events));
    const result = await runCli(args, env, 60_000);
    assert.is(result.code, 1, `${what}: ${result.stdout}${result.stderr}`);
    assert.match(result.stdout, /FAIL .*checkpoint\.txt/, what);
    if (position !== undefined)
      assert.match(result.stdout, new RegExp(`first position that differs is ${position}\\b`), what);
    await root.query(`DELETE FROM ${events}`);
    await root.query(`INSERT INTO ${events} SELECT * FROM \`${name}\`.kept`);
  }
}

const url = await mariadbUrl();
if (url) {
  it('MariaDB: the same alterations fail at their position; the untouched log verifies', async () => {
    const database = await freshDatabase(url);
    const env = { EVENT_STORE: 'mariadb', MARIADB_URL: database.url };
    const connection = await createConnection({ uri: database.url });
    try {
      const { dataDir, kept } = await keptLog(env);
      const clean = await verify({ ...env, DATA_DIR: dataDir }, kept);
      assert.is(clean.code, 0, clean.stdout + clean.stderr);
      await connection.query('CREATE TABLE kept_events AS SELECT * FROM pmacontrol_events');
      for (const [name, { position, statements }] of Object.entries(ALTERATIONS)) {
        for (const statement of statements) await connection.query(statement.replace('{events}', 'pmacontrol_events'));
        const result = await verify({ ...env, DATA_DIR: dataDir }, kept);
        assert.is(result.code, 1, `${name}: ${result.stdout}${result.stderr}`);
        assert.match(
          result.stdout,
          new RegExp(`first position that differs is ${position}\\b`),
          `${name}: ${result.stdout}`,
        );
        await connection.query('DELETE FROM pmacontrol_events');
        await connection.query('INSERT INTO pmacontrol_events SELECT * FROM kept_events');
      }
      const again = await verify({ ...env, DATA_DIR: dataDir }, kept);
      assert.is(again.code, 0, 'restored, it verifies again');
    } finally {
      await connection.end();
      await database.drop();
    }
  });
  it('MariaDB: a backup restored under another name, read by a user that may only SELECT', async () => {
    const source = await freshDatabase(url);
    const copy = await freshDatabase(url);
    const env = { EVENT_STORE: 'mariadb', MARIADB_URL: source.url };
    const root = await createConnection({ uri: url });
    const reader = `ro_${Date.now().toString(36)}`;
    try {
      const { dataDir, kept } = await keptLog(env);
      const dir = join(tempDir(), 'backup');
      assert.is((await runCli(['backup', '--to', dir], { ...env, DATA_DIR: dataDir })).code, 0);
      const target = { EVENT_STORE: 'mariadb', MARIADB_URL: copy.url, DATA_DIR: tempDir() };
      assert.is((await runCli(['restore', '--from', dir], target)).code, 0);
      const publicKey = join(tempDir(), 'public-key.txt');
      writeFileSync(publicKey, JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).public_key);
      const name = new URL(copy.url).pathname.slice(1);
      await root.query(`CREATE USER '${reader}'@'%' IDENTIFIED BY 'ro-pass'`);
      await root.query(`GRANT SELECT ON \`${name}\`.* TO '${reader}'@'%'`);
      const readOnly = new URL(copy.url);
      [readOnly.username, readOnly.password] = [reader, 'ro-pass'];
      const nowhere = { DATA_DIR: join(tempDir(), 'none') };
      const args = ['verify', '--from', readOnly.toString(), '--public-key', publicKey, '--checkpoint', kept];
      const clean = await runCli(args, nowhere, 60_000);
      assert.is(clean.code, 0, clean.stdout + clean.stderr);
      await alterEach(root, name, args, nowhere);
    } finally {
      await root.query(`DROP USER IF EXISTS '${reader}'@'%'`);
      await root.end();
      await source.drop();
      await copy.drop();
    }
  });
} else {
  it.skip('MariaDB: verify (no MariaDB reachable)', () => {});
}

it.run();
