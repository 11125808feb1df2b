import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, copyFileSync, cpSync, existsSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InstanceLock } from '../../src/data-dir.js';
import type { DomainEvent } from '../../src/domain/shared/types.js';
import { CONFIG_STREAM } from '../../src/domain/shared/types.js';
import { SqliteEventStore } from '../../src/event-store/sqlite/store.js';
import Database from '../../src/sqlite/driver.js';
import { CLI_ARGS, ROOT, runCli, servedDataDir, tempDir } from '../support/process.js';

const it = suite('replay: a rebuild killed (kill -9) is resumed by the next one, which ends as one run would');

const REBUILD = 'read-models.sqlite.rebuild';

/**
 * Appends `count` tag events to the DATA_DIR's log, 1,000 at a time: creations, changes (entries a
 * rebuild holds back until a consistent point) and hard deletes (tombstones).
 */
async function appendTags(dataDir: string, count: number): Promise<void> {
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  let revision = await store.head(CONFIG_STREAM);
  const batch: DomainEvent[] = [];
  const flush = async () => {
    const at = new Date().toISOString();
    const records = batch.splice(0).map((event) => ({
      ...event,
      metadata: { actor: 'test', request_id: randomBytes(8).toString('hex'), at, schema: 2 },
    }));
    revision = (await store.append(CONFIG_STREAM, records, revision)).nextRevision;
  };
  for (let i = 1, made = 0; made < count; i++) {
    batch.push({ type: 'TagCreated', data: { id: i, name: `t${i}`, color: '#000000', background: '#FFFFFF' } });
    batch.push({ type: 'TagUpdated', data: { id: i, changes: { color: '#111111' } } });
    // The first 500 tags are changed all along (entries held back across many batches); later ones
    // are deleted now and then.
    if (i % 7 === 0 && i - 3 > 500) batch.push({ type: 'TagDeleted', data: { id: i - 3 } });
    const early = 1 + ((i * 7) % Math.min(i, 500));
    batch.push({ type: 'TagUpdated', data: { id: early, changes: { name: `t${early}-${i}` } } });
    made += i % 7 === 0 && i - 3 > 500 ? 4 : 3;
    if (batch.length >= 1000) await flush();
  }
  if (batch.length > 0) await flush();
  await store.close();
}

/** Overwrites the last leaf page of `table` in a closed SQLite file (its WAL checkpointed first). */
function spoilLastPage(file: string, table: string): void {
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const page = db
    .prepare<[string], number>("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path DESC")
    .pluck()
    .get(table)!;
  const size = db.pragma('page_size', { simple: true }) as number;
  db.close();
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(size, 0xff), 0, size, (page - 1) * size);
  closeSync(fd);
}

/** Runs `replay --apply` and kills it (SIGKILL) once it has reported `events` replayed. */
function replayKilledAt(dataDir: string, events: number): Promise<{ signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGS, 'replay', '--apply'], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const reached = [...stderr.matchAll(/replayed (\d+) events/g)].some((m) => Number(m[1]) >= events);
      if (reached) child.kill('SIGKILL');
    });
    const limit = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('exit', (_code, signal) => {
      clearTimeout(limit);
      resolve({ signal, stderr });
    });
  });
}

let killed: Promise<{ dataDir: string; reached: number }> | undefined;

/**
 * A DATA_DIR of 260,000 events whose `replay --apply` was killed past 230,000 (once for the suite),
 * and the last count it reported; each test works on a copy of the directory.
 */
async function leftBehind(): Promise<{ dataDir: string; reached: number }> {
  killed ??= (async () => {
    const dataDir = await servedDataDir();
    await appendTags(dataDir, 260_000);
    const run = await replayKilledAt(dataDir, 230_000);
    assert.is(run.signal, 'SIGKILL', `killed before its end: ${run.stderr.slice(-300)}`);
    assert.ok(existsSync(join(dataDir, REBUILD)), 'the rebuild left its file');
    const reached = Math.max(...[...run.stderr.matchAll(/replayed (\d+) events/g)].map((m) => Number(m[1])));
    return { dataDir, reached };
  })();
  const { dataDir, reached } = await killed;
  const copy = tempDir();
  cpSync(dataDir, copy, { recursive: true });
  return { dataDir: copy, reached };
}

it('killed past its first consistent point, resumed there; the result is what a rebuild in one run makes', async () => {
  const { dataDir, reached } = await leftBehind();
  const resumed = await runCli(['replay', '--apply'], { DATA_DIR: dataDir }, 120_000);
  assert.is(resumed.code, 0, resumed.stderr);
  const at = Number(resumed.stderr.match(/resuming the rebuild a replay left at event (\d+)/)?.[1] ?? -1);
  // A consistent point every 200,000 events at most, and a few saves on their way when it was killed.
  assert.ok(at > 0 && at <= reached && at >= reached - 210_000, `resumed at ${at}, killed past ${reached}`);
  assert.not.match(resumed.stderr, /replayed 10000 events/, 'the events before it were not folded again');
  assert.match(resumed.stdout, /replaced the read models/);
  assert.not.ok(existsSync(join(dataDir, REBUILD)), 'taken in');

  // A rebuild in one run (nothing left to resume) finds the resumed read models equal to its own.
  const check = await runCli(['replay'], { DATA_DIR: dataDir }, 120_000);
  assert.not.match(check.stderr, /resuming/);
  assert.is(check.code, 0, check.stdout);
  assert.match(check.stdout, /read models match the log/);
});

it("the file a rebuild left, in a DATA_DIR whose log is another: started over, the log's read models made", async () => {
  const left = await leftBehind();
  const other = await servedDataDir();
  for (const suffix of ['', '-wal', '-shm']) {
    const from = join(left.dataDir, REBUILD + suffix);
    if (existsSync(from)) copyFileSync(from, join(other, REBUILD + suffix));
  }
  const elsewhere = await runCli(['replay'], { DATA_DIR: other }, 120_000);
  assert.match(elsewhere.stderr, /a rebuild left a file the log does not match: starting over/);
  assert.not.match(elsewhere.stderr, /resuming/);
  assert.is(elsewhere.code, 0, elsewhere.stdout);
  assert.match(elsewhere.stdout, /read models match the log/);
});

it('a file not at a consistent point (as a build that kept none wrote it) is started over', async () => {
  const { dataDir } = await leftBehind();
  const file = new Database(join(dataDir, REBUILD));
  file.prepare("DELETE FROM meta WHERE name = 'rebuild_consistent_at'").run();
  file.close();
  const replayed = await runCli(['replay'], { DATA_DIR: dataDir }, 120_000);
  assert.not.match(replayed.stderr, /resuming/);
  assert.match(replayed.stderr, /replayed 10000 events/, 'folded from the start');
  // Its stored read models are those of the directory before the log was appended to: behind it,
  // not different. They are folded up to the head first, as a start folds them, and then match.
  assert.is(replayed.code, 0, replayed.stdout);
  assert.match(replayed.stdout, /read models match the log/);
});

it('a file found damaged where the resumed rebuild writes (as a power cut may leave it): removed, then started over', async () => {
  const { dataDir } = await leftBehind();
  spoilLastPage(join(dataDir, REBUILD), 'changes');
  const spoilt = await runCli(['replay'], { DATA_DIR: dataDir }, 120_000);
  assert.is(spoilt.code, 1, spoilt.stderr);
  assert.match(spoilt.stderr, /resuming/);
  assert.match(spoilt.stderr, /the rebuild's file is damaged \(.*\): removed, the next replay starts over/);
  assert.not.ok(existsSync(join(dataDir, REBUILD)));
  const over = await runCli(['replay'], { DATA_DIR: dataDir }, 120_000);
  assert.not.match(over.stderr, /resuming|damaged/);
  assert.match(over.stdout, /replayed \d+ events/);
});

it('one rebuild at a time: a replay while another rebuilds is refused, and touches nothing; so is a command while replay --apply replaces the files', async () => {
  const dataDir = await servedDataDir();
  const held = InstanceLock.rebuilding(dataDir);
  try {
    const refused = await runCli(['replay'], { DATA_DIR: dataDir });
    assert.is(refused.code, 1);
    assert.match(refused.stderr, /a replay is rebuilding the read models of DATA_DIR .*: wait for it/);
    assert.not.ok(existsSync(join(dataDir, REBUILD)));
  } finally {
    held.release();
  }
  const after = await runCli(['replay'], { DATA_DIR: dataDir });
  assert.is(after.code, 0, after.stderr);
  // The same holds for DATA_DIR's own lock, which replay --apply holds alone while it replaces the files.
  const replacing = InstanceLock.exclusive(dataDir);
  try {
    const exported = await runCli(['export'], { DATA_DIR: dataDir });
    assert.is(exported.code, 1);
    assert.match(exported.stderr, /a replay --apply is replacing the read models of DATA_DIR .*: wait for it/);
  } finally {
    replacing.release();
  }
});

it.run();
