import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../support/process.js';

/**
 * Bodies are decoded as UTF-8 by the service itself, strictly (a leading BOM dropped, a byte that is
 * not UTF-8 refuses the body rather than becoming U+FFFD in a name or a password), without iconv-lite:
 * it loads its tables of every encoding on the first body it reads, in the event-loop turn of a
 * start's first write. A fresh process reads two bodies through a real Koa server and reports what it
 * decoded and whether any encoding table was loaded.
 */
const SCRIPT = `
import { createRequire } from 'node:module';
import Koa from 'koa';
const { readJson } = await import(${JSON.stringify(`${ROOT}src/http/body.ts`)});
const app = new Koa();
app.use(async (ctx) => {
  try { ctx.body = (await readJson(ctx)).value; } catch (error) { ctx.status = error.status; ctx.body = { detail: error.message }; }
});
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const post = async (bytes) => {
  const reply = await fetch('http://127.0.0.1:' + server.address().port, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes,
  });
  return { status: reply.status, body: await reply.json() };
};
const bom = Buffer.from([0xef, 0xbb, 0xbf]);
const good = await post(Buffer.concat([bom, Buffer.from('{"name":"café"}')]));
const bad = await post(Buffer.concat([bom, Buffer.from('{"name":"caf'), Buffer.from([0xff]), Buffer.from('é"}')]));
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /iconv-lite.encodings/.test(path));
console.log(JSON.stringify({ good, bad, loaded }));
server.close();
`;

test('a body is UTF-8 with its BOM dropped, refused when a byte is not UTF-8; no encoding table is loaded', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.is(run.status, 0, run.stderr);
  const { good, bad, loaded } = JSON.parse(run.stdout);
  assert.equal(good, { status: 200, body: { name: 'café' } });
  assert.equal(bad, { status: 400, body: { detail: 'the body is not valid UTF-8' } });
  assert.equal(loaded, [], 'iconv-lite loaded its encodings');
});

test.run();
