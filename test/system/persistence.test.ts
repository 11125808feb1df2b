import { randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import { SqliteReadModelStore } from '../../src/read-models/sqlite/store.js';
import Database from '../../src/sqlite/driver.js';
import { BASE, send, startHarness } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const it = suite('persistence: the real service on the embedded store');

it('data survives a restart; the restart loads the stored read models, deleted ids included, without refolding', async () => {
  const dataDir = tempDir();
  const first = await spawnService({ DATA_DIR: dataDir });
  const made = await send(first.url, 'POST', `${BASE}/tags`, {
    body: { name: 'kept', color: '#000000', background: '#FFFFFF' },
  });
  const gone = await send(first.url, 'POST', `${BASE}/tags`, {
    body: { name: 'gone', color: '#000000', background: '#FFFFFF' },
  });
  await send(first.url, 'DELETE', `${BASE}/tags/${gone.body.id}`);
  assert.is(await first.stop(), 0);
  assert.match(first.output(), /"msg":"stopped"/);
  // The previous layout kept an index of the change log by time: opening the file drops it, and
  // nothing is folded again for that (asserted below).
  const previous = new Database(join(dataDir, 'read-models.sqlite'));
  previous.exec('CREATE INDEX changes_time ON changes (hw_at, position)');
  previous.close();
  const second = await spawnService({ DATA_DIR: dataDir });
  try {
    // genesis (0–7), the log key (8), two tags and a delete (9–11): started where the read models
    // were saved, nothing folded again
    assert.match(second.output(), /"revision":11/);
    assert.not.match(second.output(), /projecting the log/);
    const read = await send(second.url, 'GET', `${BASE}/tags/${made.body.id}`);
    assert.is(read.body.item.name, 'kept');
    assert.is((await send(second.url, 'GET', `${BASE}/tags/${gone.body.id}`)).body.code, 'deleted');
    const again = await send(second.url, 'POST', `${BASE}/tags`, {
      body: { id: gone.body.id, name: 'again', color: '#000000', background: '#FFFFFF' },
    });
    assert.is(again.status, 409, 'a deleted id stays taken after a restart');
    const next = await send(second.url, 'POST', `${BASE}/tags`, {
      body: { name: 'next', color: '#000000', background: '#FFFFFF' },
    });
    assert.is(next.body.id, gone.body.id + 1);
    // Saved within moments (the projector groups saves), without a restart.
    const checkpoint = new Database(join(dataDir, 'read-models.sqlite'), { readonly: true });
    const stored = () => checkpoint.prepare("SELECT value FROM meta WHERE name = 'checkpoint'").get();
    for (let i = 0; i < 100 && (stored() as { value: string }).value !== '11'; i++) await pause(50);
    assert.equal(stored(), { value: '11' });
    const indexes = checkpoint.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'changes_time'");
    assert.equal(indexes.all(), [], 'the retired index is dropped');
    checkpoint.close();
  } finally {
    await second.stop();
  }
});

it('kill -9 amid four writers: every tag answered 201 is listed after a restart, and replay finds no difference', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  const acknowledged: number[] = [];
  let stop = false;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; !stop && i < 500; i++) {
      try {
        const reply = await send(service.url, 'POST', `${BASE}/tags`, {
          body: { name: `w${w}-${i}`, color: '#000000', background: '#FFFFFF' },
        });
        if (reply.status === 201) acknowledged.push(reply.body.id);
      } catch {
        return; // the connection died with the process: not acknowledged
      }
    }
  });
  await new Promise((r) => setTimeout(r, 700));
  await service.kill9();
  stop = true;
  await Promise.all(writers);
  assert.ok(acknowledged.length > 0, 'some writes were acknowledged before the kill');
  const again = await spawnService({ DATA_DIR: dataDir });
  try {
    const list = await send(again.url, 'GET', `${BASE}/tags`);
    const present = new Set(list.body.items.map((t: { id: number }) => t.id));
    const lost = acknowledged.filter((id) => !present.has(id));
    assert.equal(lost, [], `lost acknowledged writes: ${lost.join(', ')}`);
  } finally {
    await again.stop();
  }
  const replay = await runCli(['replay'], { DATA_DIR: dataDir });
  assert.is(replay.code, 0, replay.stdout + replay.stderr);
});

it('secrets are not in the SQLite files in plain text; the generated key file has mode 0600', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  const password = 'plain-text-password-7f3a';
  const key = makeKey('ed25519');
  try {
    await send(service.url, 'POST', `${BASE}/servers`, {
      body: { id_client: 99, id_environment: 1, name: 's', ip: '10.0.0.1', login: 'l', passwd: password },
    });
    const made = await send(service.url, 'POST', `${BASE}/ssh-keys`, {
      body: { name: 'k', user: 'root', public_key: key.publicKey, private_key: key.privateKey },
    });
    assert.is(made.status, 201);
  } finally {
    await service.stop();
  }
  const keyLine = key.privateKey.split('\n')[1];
  for (const file of ['events.sqlite', 'read-models.sqlite']) {
    const bytes = readFileSync(join(dataDir, file)).toString('latin1');
    assert.ok(bytes.length > 0);
    assert.not.ok(bytes.includes(password), `${file} holds the password`);
    assert.not.ok(bytes.includes(keyLine), `${file} holds the private key`);
  }
  assert.not.ok(service.output().includes(password));
  assert.is(statSync(join(dataDir, 'secret.key')).mode & 0o777, 0o600);
});

it('CONFIG_SECRET_KEY is used when set; a malformed one stops the start with a clear message', async () => {
  const bad = await runCli(['serve'], { DATA_DIR: tempDir(), CONFIG_SECRET_KEY: 'short', PORT: '0' });
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /CONFIG_SECRET_KEY must be 32 bytes/);
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, CONFIG_SECRET_KEY: 'ab'.repeat(32) });
  await service.stop();
  assert.throws(() => statSync(join(dataDir, 'secret.key')));
});

it('replay: rebuilds from the log, reports a tampered read model, --apply repairs it', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  const made = await send(service.url, 'POST', `${BASE}/clients`, { body: { libelle: 'ACME' } });
  await send(service.url, 'PATCH', `${BASE}/clients/${made.body.id}`, { body: { logo: 'a.png' } });
  await service.stop();
  const clean = await runCli(['replay'], { DATA_DIR: dataDir });
  assert.is(clean.code, 0, clean.stdout + clean.stderr);
  assert.match(clean.stdout, /replayed 11 events/);
  assert.match(clean.stdout, /read models match the log/);
  const db = new Database(join(dataDir, 'read-models.sqlite'));
  db.prepare(
    "UPDATE entries SET doc = json_set(doc, '$.libelle', 'Tampered') WHERE resource = 'clients' AND id = ?",
  ).run(made.body.id);
  db.prepare("DELETE FROM versions WHERE resource = 'clients' AND entry_id = ? AND revision = 1").run(made.body.id);
  db.prepare("INSERT INTO tombstones VALUES ('tags', 42, 1, '2026-01-01T00:00:00.000Z')").run();
  db.close();
  const dirty = await runCli(['replay'], { DATA_DIR: dataDir });
  assert.is(dirty.code, 1);
  assert.match(dirty.stdout, new RegExp(`entries clients/${made.body.id}: rebuilt .*ACME.*stored .*Tampered`));
  assert.match(dirty.stdout, new RegExp(`versions clients/${made.body.id}/1: rebuilt .*a\\.png.*, stored absent`));
  assert.match(dirty.stdout, /tombstones tags\/42: rebuilt absent, stored/, 'a deleted id the log does not hold');
  const applied = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
  assert.is(applied.code, 0);
  assert.is((await runCli(['replay'], { DATA_DIR: dataDir })).code, 0);
  const restarted = await spawnService({ DATA_DIR: dataDir });
  try {
    assert.is((await send(restarted.url, 'GET', `${BASE}/clients/${made.body.id}`)).body.item.libelle, 'ACME');
  } finally {
    await restarted.stop();
  }
});

it('replay --apply beside a serving instance: taken in at the next question, caught up, nothing lost', async () => {
  const dataDir = tempDir();
  const file = join(dataDir, 'read-models.sqlite');
  const service = await spawnService({ DATA_DIR: dataDir });
  const tag = (name: string) => ({ body: { name, color: '#000000', background: '#FFFFFF' } });
  try {
    for (let i = 0; i < 10; i++) await send(service.url, 'POST', `${BASE}/tags`, tag(`before-${i}`));
    const actors = async () => {
      const reply = await send(service.url, 'GET', '/fr/api/changes?limit=1000');
      return { status: reply.status, items: reply.body.items as { position: number; actor: string }[] };
    };
    const head = (await actors()).items.at(-1)!.position;
    // A row of the served file made wrong: only a rebuild from the log puts it right.
    const db = new Database(file);
    db.prepare("UPDATE changes SET actor = 'tampered' WHERE position = ?").run(head);
    db.close();
    assert.is((await actors()).items.at(-1)!.actor, 'tampered');
    const inode = statSync(file).ino;
    const replay = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
    assert.is(replay.code, 0, replay.stdout + replay.stderr);
    assert.match(replay.stdout, /an instance is serving this DATA_DIR/);
    assert.ok(statSync(`${file}.rebuilt`).isFile());
    // Written after the rebuild ended: the instance folds them onto the rebuilt file.
    for (let i = 0; i < 5; i++) await send(service.url, 'POST', `${BASE}/tags`, tag(`after-${i}`));
    let answer = await actors();
    for (let tries = 0; answer.status !== 200 && tries < 100; tries++) {
      assert.is(answer.status, 503);
      await pause(50);
      answer = await actors();
    }
    assert.is(answer.status, 200);
    assert.is(answer.items.find((item) => item.position === head)!.actor, 'anonymous');
    assert.is(answer.items.filter((item) => item.actor === 'tampered').length, 0);
    const names = (await send(service.url, 'GET', `${BASE}/tags?limit=100`)).body.items.map(
      (t: { name: string }) => t.name,
    );
    assert.is(names.length, 15);
    assert.is(answer.items.length, (await actors()).items.length);
    assert.is.not(statSync(file).ino, inode, 'the file is the rebuilt one');
    assert.throws(() => statSync(`${file}.rebuilt`));
    assert.match(service.output(), /a rebuild of the read models \(replay --apply\) taken in/);
  } finally {
    assert.is(await service.stop(), 0);
  }
  const check = await runCli(['replay'], { DATA_DIR: dataDir });
  assert.is(check.code, 0, check.stdout);
});

it('the CLI prints the OpenAPI document and refuses unknown commands', async () => {
  const printed = await runCli(['openapi'], {});
  assert.is(printed.code, 0);
  assert.is(JSON.parse(printed.stdout).openapi, '3.1.0');
  const unknown = await runCli(['frobnicate'], {});
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /usage/);
});

it.run();

const locked = suite('persistence: a locked SQLite file');

locked('a write that cannot take the SQLite lock gets 503 after the busy timeout, and reads keep working', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  const blocker = new Database(join(dataDir, 'events.sqlite'));
  try {
    blocker.exec('BEGIN EXCLUSIVE');
    const refused = await send(service.url, 'POST', `${BASE}/tags`, {
      body: { name: 'blocked', color: '#000000', background: '#FFFFFF' },
    });
    assert.equal([refused.status, refused.body.code], [503, 'unavailable']);
    assert.is((await send(service.url, 'GET', `${BASE}/environments`)).status, 200);
    blocker.exec('ROLLBACK');
    const accepted = await send(service.url, 'POST', `${BASE}/tags`, {
      body: { name: 'blocked', color: '#000000', background: '#FFFFFF' },
    });
    assert.is(accepted.status, 201);
  } finally {
    blocker.close();
    await service.stop();
  }
});

locked.run();

const mismatch = suite('persistence: read models the log does not hold are never served');

const tag = (name: string) => ({ body: { name, color: '#000000', background: '#FFFFFF' } });

/** A data directory with one tag, a copy of its log at that point, then a second tag. */
async function withOldBackup() {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  await send(service.url, 'POST', `${BASE}/tags`, tag('first'));
  await service.stop();
  const backup = readFileSync(join(dataDir, 'events.sqlite'));
  const again = await spawnService({ DATA_DIR: dataDir });
  await send(again.url, 'POST', `${BASE}/tags`, tag('second'));
  await again.stop();
  return { dataDir, backup };
}

const replaceLog = (dataDir: string, bytes?: Buffer) => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `events.sqlite${suffix}`), { force: true });
  if (bytes) writeFileSync(join(dataDir, 'events.sqlite'), bytes);
};

mismatch('a log older than the read models (an old backup restored) is refused, saying what to do', async () => {
  const { dataDir, backup } = await withOldBackup();
  replaceLog(dataDir, backup);
  const refused = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /read-models\.sqlite/);
  assert.match(refused.stderr, /behind|older/);
  assert.match(refused.stderr, /replay --apply/);
  const rebuilt = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
  assert.is(rebuilt.code, 0, rebuilt.stdout + rebuilt.stderr);
  const service = await spawnService({ DATA_DIR: dataDir });
  try {
    const names = (await send(service.url, 'GET', `${BASE}/tags`)).body.items.map((t: { name: string }) => t.name);
    assert.equal(names, ['first'], 'only what the log holds is served');
    assert.is((await send(service.url, 'POST', `${BASE}/tags`, tag('third'))).status, 201);
  } finally {
    await service.stop();
  }
});

mismatch('a deleted log is refused, not silently restarted from the read models', async () => {
  const { dataDir } = await withOldBackup();
  replaceLog(dataDir);
  const refused = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /replay --apply/);
});

mismatch('read models built from another log are refused', async () => {
  const { dataDir } = await withOldBackup();
  const other = tempDir();
  const service = await spawnService({ DATA_DIR: other });
  await send(service.url, 'POST', `${BASE}/tags`, tag('elsewhere'));
  await send(service.url, 'POST', `${BASE}/tags`, tag('elsewhere-2'));
  await service.stop();
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `read-models.sqlite${suffix}`), { force: true });
  copyFileSync(join(other, 'read-models.sqlite'), join(dataDir, 'read-models.sqlite'));
  const refused = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /another (event )?log/);
});

mismatch.run();

const damaged = suite('persistence: damaged read models are rebuilt from the log, which is never touched');

/** Every row of the log, to show it is the same before and after. */
function logRows(dataDir: string): string {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return JSON.stringify(db.prepare('SELECT * FROM events ORDER BY position').all());
  } finally {
    db.close();
  }
}

async function dataWithTags(): Promise<string> {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  for (const name of ['a', 'b', 'c']) await send(service.url, 'POST', `${BASE}/tags`, tag(name));
  await send(service.url, 'DELETE', `${BASE}/tags/2`);
  await service.stop();
  return dataDir;
}

async function assertServesTheLog(dataDir: string, expectLog: RegExp) {
  const service = await spawnService({ DATA_DIR: dataDir });
  try {
    assert.match(service.output(), expectLog);
    const names = (await send(service.url, 'GET', `${BASE}/tags`)).body.items.map((t: { name: string }) => t.name);
    assert.equal(names, ['a', 'c']);
    assert.is((await send(service.url, 'GET', `${BASE}/tags/2`)).body.code, 'deleted');
    assert.is((await send(service.url, 'GET', `${BASE}/tags/1/history`)).body.items.length, 1);
  } finally {
    await service.stop();
  }
}

damaged('a corrupt read-models.sqlite is set aside and rebuilt; the log is untouched', async () => {
  const dataDir = await dataWithTags();
  const before = logRows(dataDir);
  const file = join(dataDir, 'read-models.sqlite');
  writeFileSync(file, Buffer.alloc(statSync(file).size, 0x5a));
  await assertServesTheLog(dataDir, /read-models\.sqlite.*corrupt/);
  assert.ok(
    readdirSync(dataDir).some((name) => /^read-models\.sqlite\.corrupt-/.test(name)),
    'set aside',
  );
  assert.is(logRows(dataDir), before);
});

damaged('a missing read-models.sqlite is rebuilt from the log, with progress in the log lines', async () => {
  const dataDir = await dataWithTags();
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `read-models.sqlite${suffix}`), { force: true });
  await assertServesTheLog(dataDir, /"position":\d+[^\n]*"msg":"projecting the log"/);
});

damaged('an unreadable read-model store (not a file) is set aside and rebuilt', async () => {
  const dataDir = await dataWithTags();
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `read-models.sqlite${suffix}`), { force: true });
  mkdirSync(join(dataDir, 'read-models.sqlite'));
  await assertServesTheLog(dataDir, /set aside/);
});

damaged('replay --apply repairs a corrupt read-models.sqlite', async () => {
  const dataDir = await dataWithTags();
  const file = join(dataDir, 'read-models.sqlite');
  writeFileSync(file, Buffer.alloc(statSync(file).size, 0x5a));
  const applied = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
  assert.is(applied.code, 0, applied.stdout + applied.stderr);
  assert.is((await runCli(['replay'], { DATA_DIR: dataDir })).code, 0);
  await assertServesTheLog(dataDir, /listening/);
});

/** Overwrites the first page of a table or an index of a closed read-model file with garbage. */
function damagePage(file: string, object: string): void {
  const db = new Database(file, { readonly: true });
  const size = db.pragma('page_size', { simple: true }) as number;
  const root = db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').pluck().get(object) as number;
  db.close();
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(size, 0x5a), 0, size, (root - 1) * size);
  closeSync(fd);
}

/** What the change log says, in a form to compare (the request ids and times are the log's own). */
const changeLog = async (url: string) => (await send(url, 'GET', '/fr/api/changes?limit=1000')).text;

damaged(
  'damage found while serving is answered 503, set aside and rebuilt from the log, then answered right',
  async () => {
    // A page of the change log (read by the first question), and an index the start reads (requests).
    for (const object of ['changes', 'requests_time']) {
      const dataDir = await dataWithTags();
      const first = await spawnService({ DATA_DIR: dataDir });
      const before = await changeLog(first.url);
      await first.stop();
      damagePage(join(dataDir, 'read-models.sqlite'), object);
      const service = await spawnService({ DATA_DIR: dataDir });
      try {
        const answers: number[] = [];
        for (let tries = 0; tries < 100; tries++) {
          const reply = await send(service.url, 'GET', '/fr/api/changes?limit=1000');
          answers.push(reply.status);
          if (reply.status === 200) {
            assert.is(reply.text, before, `${object}: the rebuilt change log is the one before the damage`);
            break;
          }
          assert.is(reply.status, 503, object);
          assert.is(reply.headers.get('retry-after'), '5');
          assert.match(reply.body.detail, /being rebuilt from the event log/);
          await pause(100);
        }
        assert.is(answers.at(-1), 200, `${object}: ${answers.join(' ')}`);
        assert.match(service.output(), /read models damaged: set aside, rebuilding them from the log/);
        assert.match(service.output(), /read models rebuilt from the log/);
        assert.is((await fetch(`${service.url}/readyz`)).status, 200);
        assert.ok(
          readdirSync(dataDir).some((name) => /^read-models\.sqlite\.corrupt-/.test(name)),
          'set aside',
        );
      } finally {
        await service.stop();
      }
      const replayed = await runCli(['replay'], { DATA_DIR: dataDir });
      assert.is(replayed.code, 0, replayed.stdout + replayed.stderr);
    }
  },
);

damaged(
  'replay checks the file, not only its rows: damage in an index is found, and replay --apply repairs it',
  async () => {
    for (const object of ['changes_actor', 'changes']) {
      const dataDir = await dataWithTags();
      damagePage(join(dataDir, 'read-models.sqlite'), object);
      const found = await runCli(['replay'], { DATA_DIR: dataDir });
      assert.is(found.code, 1, `${object}: ${found.stdout}${found.stderr}`);
      assert.match(found.stdout, /the stored file is damaged: .*malformed/);
      const applied = await runCli(['replay', '--apply'], { DATA_DIR: dataDir });
      assert.is(applied.code, 0, applied.stdout + applied.stderr);
      assert.match(applied.stdout, /replaced the read models/);
      const again = await runCli(['replay'], { DATA_DIR: dataDir });
      assert.is(again.code, 0, again.stdout + again.stderr);
      assert.match(again.stdout, /read models match the log/);
    }
  },
);

/** The log on SQLite, whose reads from its start (a rebuild's) wait, once `hold` is called, until `release`. */
function logHeldFromTheStart(file: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const store = new SqliteEventStore(file);
  const readStream = store.readStream.bind(store);
  let holding = false;
  store.readStream = async (stream, options) => {
    if (holding && options?.fromRevision === 0) await held;
    return readStream(stream, options);
  };
  return { store, hold: () => (holding = true), release };
}

damaged('while damaged read models are rebuilt, the instance is not ready and serves the present', async () => {
  const dir = tempDir();
  const file = join(dir, 'read-models.sqlite');
  const log = join(dir, 'events.sqlite');
  const secretKey = randomBytes(32);
  const first = await startHarness({
    store: new SqliteEventStore(log),
    readModels: new SqliteReadModelStore(file),
    secretKey,
  });
  for (const name of ['a', 'b']) await first.request('POST', `${BASE}/tags`, tag(name));
  await first.close();
  damagePage(file, 'changes');
  const { store, hold, release } = logHeldFromTheStart(log);
  const harness = await startHarness({ store, readModels: new SqliteReadModelStore(file), secretKey });
  try {
    hold();
    assert.is((await harness.request('GET', '/fr/api/changes')).status, 503);
    const ready = await harness.request('GET', '/readyz');
    assert.is(ready.status, 503);
    assert.match(ready.body.reason, /rebuilding the stored read models/);
    assert.is((await harness.request('GET', `${BASE}/tags`)).body.total, 2, 'the present is served');
    assert.is((await harness.request('POST', `${BASE}/tags`, tag('c'))).status, 201, 'writes are taken');
    assert.is((await harness.request('GET', `${BASE}/tags/1/history`)).status, 503);
    release();
    for (let tries = 0; tries < 100 && harness.service.repairing; tries++) await pause(20);
    assert.is((await harness.request('GET', '/readyz')).status, 200);
    const items = (await harness.request('GET', '/fr/api/changes?limit=100')).body.items;
    assert.equal(
      items
        .filter((i: { type: string }) => i.type === 'TagCreated')
        .map((i: { data: { name: string } }) => i.data.name),
      ['a', 'b', 'c'],
      'the write taken during the rebuild is in the rebuilt change log',
    );
  } finally {
    release();
    await harness.close();
  }
});

damaged.run();

const unusable = suite('persistence: a DATA_DIR that cannot hold the data');

unusable('is refused at once with a message that names it (under /proc; a file)', async () => {
  const file = join(tempDir(), 'a-file');
  writeFileSync(file, 'not a directory');
  for (const [dir, why] of [
    ['/proc/pmacontrol-data', /creating \/proc\/pmacontrol-data failed \(ENOENT\)/],
    [file, /it is not a directory/],
  ] as const) {
    const run = await runCli(['serve'], { DATA_DIR: dir, PORT: '0' }, 20_000);
    assert.is(run.code, 1, `${dir}: exit code (null: it hung)`);
    assert.match(
      run.stderr,
      new RegExp(`refused to start: DATA_DIR ${dir.replace(/[/.]/g, '\\$&')} cannot hold the data`),
    );
    assert.match(run.stderr, why);
  }
});

unusable.run();
