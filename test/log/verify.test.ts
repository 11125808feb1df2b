import { cpSync, readFileSync, writeFileSync } from 'node:fs';
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
    const kept = await checkpoint(service.url, tempDir(), 'checkpoint.txt');
    return { dataDir, kept, size: Number((await fetch(`${service.url}/readyz`).then((r) => r.json())).position) };
  } finally {
    await service.stop();
  }
}

type Alteration = 'byte' | 'delete' | 'swap';
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
};

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
} else {
  it.skip('MariaDB: verify (no MariaDB reachable)', () => {});
}

it.run();
