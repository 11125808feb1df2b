import { chmodSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatVerifier, parseSigner } from '../../src/engine/signed-note.js';
import { newLogKey } from '../../src/log/key.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

/**
 * The key that signs the log's checkpoints: made once (0600), its public half recorded in the log,
 * and never silently replaced: a start with another key, or without the key the log records, is
 * refused, as is a key file others can read. CONFIG_LOG_SIGNING_KEY serves where the file is not.
 */

const it = suite('the log signing key cannot be lost or changed by accident');

async function served(env: Record<string, string> = {}): Promise<string> {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, ...env });
  try {
    const key = await (await fetch(`${service.url}/fr/api/log/public-key`)).text();
    if (!env.CONFIG_LOG_SIGNING_KEY) {
      const file = join(dataDir, 'log-signing.key');
      assert.is(statSync(file).mode & 0o777, 0o600);
      assert.is(key.trim(), formatVerifier(parseSigner(readFileSync(file, 'utf8'))));
    }
  } finally {
    assert.is(await service.stop(), 0);
  }
  return dataDir;
}

it('made on the first start, mode 0600, and what the public-key route gives', async () => {
  await served();
});

it('another key, a missing file or a file others can read: the start is refused, saying why', async () => {
  const dataDir = await served();
  const other = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0', CONFIG_LOG_SIGNING_KEY: newLogKey() }, 15_000);
  assert.is(other.code, 1);
  assert.match(other.stderr, /is not the one this log records/);
  chmodSync(join(dataDir, 'log-signing.key'), 0o644);
  const exposed = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(exposed.code, 1);
  assert.match(exposed.stderr, /readable by others/);
  const kept = readFileSync(join(dataDir, 'log-signing.key'), 'utf8');
  rmSync(join(dataDir, 'log-signing.key'));
  const missing = await runCli(['serve'], { DATA_DIR: dataDir, PORT: '0' }, 15_000);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /log-signing\.key is missing, but the log's checkpoints are signed by/);
  const given = await spawnService({ DATA_DIR: dataDir, CONFIG_LOG_SIGNING_KEY: kept.trim() });
  assert.is(await given.stop(), 0, 'the same key, given as CONFIG_LOG_SIGNING_KEY, is taken');
});

it('pmacontrol-config log-key prints a new key that a new log takes', async () => {
  const printed = await runCli(['log-key'], {});
  assert.is(printed.code, 0);
  assert.match(printed.stdout.trim(), /^PRIVATE\+KEY\+pmacontrol-config\/[0-9a-f]{16}\+[0-9a-f]{8}\+\S+$/);
  await served({ CONFIG_LOG_SIGNING_KEY: printed.stdout.trim() });
});

it.run();
