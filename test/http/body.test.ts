import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../support/process.js';

/**
 * Bodies are decoded as UTF-8 by the service itself, as raw-body's `encoding` option did (a leading
 * BOM dropped, a byte that is not UTF-8 replaced by U+FFFD), but without iconv-lite: it loads its
 * tables of every encoding on the first body it reads, in the event-loop turn of a start's first
 * write. A fresh process reads one body through a real Koa server and reports what it decoded and
 * whether any encoding table was loaded.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
import Koa from 'koa';
const { readJson } = await import(${JSON.stringify(`${ROOT}src/http/body.ts`)});
const app = new Koa();
app.use(async (ctx) => { ctx.body = (await readJson(ctx)).value; });
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"caf'), Buffer.from([0xff]), Buffer.from('é"}')]);
const reply = await fetch('http://127.0.0.1:' + server.address().port, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes,
});
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /iconv-lite.encodings/.test(path));
console.log(JSON.stringify({ status: reply.status, body: await reply.json(), loaded }));
server.close();
`;

test('a body is UTF-8 with its BOM dropped and bad bytes replaced, and no encoding table is loaded', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.is(run.status, 0, run.stderr);
  const { status, body, loaded } = JSON.parse(run.stdout);
  assert.is(status, 200);
  assert.equal(body, { name: 'caf\uFFFDé' });
  assert.equal(loaded, [], 'iconv-lite loaded its encodings');
});

test.run();
