import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatVerifier, parseSigner } from '../../src/engine/signed-note.js';
import { newLogKey } from '../../src/log/key.js';
import { ROOT, spawnService, tempDir } from '../support/process.js';

/**
 * The standalone script of docs/log-verification.md, run as an auditor would against a real
 * instance: it checks the checkpoint's signature and an event's inclusion, and refuses another key.
 */

const it = suite("docs/log-verification.md's standalone script against a real instance");

const script = () => {
  const page = readFileSync(join(ROOT, 'docs/log-verification.md'), 'utf8');
  const code = /```js\n([\s\S]*?)\n```/.exec(page)?.[1];
  assert.ok(code, 'the page holds the script');
  const file = join(tempDir(), 'check-inclusion.mjs');
  writeFileSync(file, code!);
  return file;
};

it('it verifies an event of the log with the public key kept, and refuses another key', async () => {
  const service = await spawnService({ DATA_DIR: tempDir() });
  try {
    for (let i = 0; i < 9; i++) {
      const answer = await fetch(`${service.url}/fr/api/config/tags`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `t${i}`, color: '#112233', background: '#FFFFFF' }),
      });
      assert.is(answer.status, 201);
    }
    const dir = tempDir();
    const kept = join(dir, 'log.vkey');
    writeFileSync(kept, await (await fetch(`${service.url}/fr/api/log/public-key`)).text());
    const file = script();
    const run = (vkey: string, position: number) =>
      promisify(execFile)(process.execPath, [file, service.url, vkey, String(position)], { timeout: 30_000 });
    for (const position of [1, 7, 15]) {
      const { stdout } = await run(kept, position);
      assert.match(
        stdout,
        new RegExp(`position ${position} is in the tree of size \\d+, signed by pmacontrol-config/`),
      );
    }
    const other = join(dir, 'other.vkey');
    writeFileSync(other, formatVerifier(parseSigner(newLogKey())));
    await run(other, 7).then(
      () => assert.unreachable('another key verified the checkpoint'),
      (error: { stderr: string }) => assert.match(error.stderr, /not signed by the key kept/),
    );
  } finally {
    await service.stop();
  }
});

it.run();
