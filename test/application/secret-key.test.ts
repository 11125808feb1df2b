import { chmodSync, copyFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const it = suite('the secret key cannot be lost or changed by accident');

const server = { id_client: 99, id_environment: 1, name: 'db', ip: '10.0.0.1', login: 'l', passwd: 'kept-secret' };

/** A data directory holding one server with a password, sealed under a generated key. */
async function dataWithSecrets(env: Record<string, string> = {}): Promise<string> {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, ...env });
  const made = await send(service.url, 'POST', `${BASE}/servers`, { body: server });
  assert.is(made.status, 201);
  assert.is(await service.stop(), 0);
  return dataDir;
}

it('a missing secret.key is not replaced: the start is refused, saying how to recover', async () => {
  const dataDir = await dataWithSecrets();
  copyFileSync(join(dataDir, 'secret.key'), join(dataDir, 'backup.key'));
  rmSync(join(dataDir, 'secret.key'));
  const refused = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /secret\.key is missing/);
  assert.match(refused.stderr, /fingerprint [0-9a-f]{32}/);
  assert.match(refused.stderr, /restore/i);
  copyFileSync(join(dataDir, 'backup.key'), join(dataDir, 'secret.key'));
  chmodSync(join(dataDir, 'secret.key'), 0o600);
  const restored = await spawnService({ DATA_DIR: dataDir });
  try {
    const same = await send(restored.url, 'PATCH', `${BASE}/servers/1`, { body: { passwd: 'kept-secret' } });
    assert.equal([same.status, same.body.changed], [200, false], 'the restored key opens the stored password');
  } finally {
    await restored.stop();
  }
});

it('another key than the one the data was sealed under is refused, from the environment or the file', async () => {
  const dataDir = await dataWithSecrets();
  const refused = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0', CONFIG_SECRET_KEY: 'ab'.repeat(32) }, 15_000);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /CONFIG_SECRET_KEY/);
  assert.match(refused.stderr, /does not match/);
  // The start's probe of DATA_DIR, synced while the stores open, is removed before the refusal ends it.
  assert.equal(
    readdirSync(dataDir).filter((name) => name.startsWith('.write-probe')),
    [],
  );
});

it('two instances over one data directory with different keys: the second is refused', async () => {
  const dataDir = tempDir();
  const first = await spawnService({ DATA_DIR: dataDir, CONFIG_SECRET_KEY: 'cd'.repeat(32) });
  try {
    const second = await runCli(
      ['serve'],
      { DATA_DIR: dataDir, PORT: '0', CONFIG_SECRET_KEY: 'ef'.repeat(32) },
      15_000,
    );
    assert.is(second.code, 1);
    assert.match(second.stderr, /does not match/);
  } finally {
    await first.stop();
  }
});

it('a key file readable by group or others is refused', async () => {
  const dataDir = await dataWithSecrets();
  chmodSync(join(dataDir, 'secret.key'), 0o644);
  const refused = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /chmod 600/);
});

it('the fingerprint is recorded in the log, never the key', async () => {
  const dataDir = await dataWithSecrets({ CONFIG_SECRET_KEY: '12'.repeat(32) });
  const dump = await runCli(['replay'], { DATA_DIR: dataDir, CONFIG_SECRET_KEY: '12'.repeat(32) });
  assert.is(dump.code, 0, dump.stdout + dump.stderr);
  const Database = (await import('../../src/sqlite/driver.js')).default;
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  const rows = db.prepare("SELECT type, data FROM events WHERE type = 'SecretKeyRecorded'").all() as { data: string }[];
  const everything = (
    db.prepare('SELECT group_concat(data || metadata) AS all_text FROM events').get() as {
      all_text: string;
    }
  ).all_text;
  db.close();
  assert.is(rows.length, 1);
  assert.match(JSON.parse(rows[0].data).fingerprint, /^[0-9a-f]{32}$/);
  assert.not.ok(everything.includes('12'.repeat(32)));
});

it.run();
