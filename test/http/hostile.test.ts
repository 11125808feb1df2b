import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { makeKey } from '../support/keys.js';

const it = suite<{ h: Harness }>('hostile bodies: bounded work, bounded answers, never a 500');
it.before(async (ctx) => {
  ctx.h = await startHarness();
});
it.after(async ({ h }) => h.close());

const server = { id_client: 99, id_environment: 1, name: 'db', ip: '10.0.0.1', login: 'l', passwd: 'p' };

it('an array of 130,000 invalid items is a 422 on the array, not a stack overflow', async ({ h }) => {
  const raw = JSON.stringify({ ...server, tags: Array.from({ length: 130_000 }, () => 'x') });
  assert.ok(raw.length > 250_000);
  const reply = await h.request('POST', `${BASE}/servers`, { raw, headers: { 'content-type': 'application/json' } });
  assert.is(reply.status, 422, reply.text.slice(0, 300));
  assert.equal(reply.body.errors, [{ field: 'tags', code: 'too_many', message: 'must have at most 1000 items' }]);
});

it('90,000 unknown keys: the 422 lists the first 100 problems and counts them all', async ({ h }) => {
  const body: Record<string, unknown> = { ...server };
  for (let i = 0; i < 90_000; i++) body[`k${i}`] = 1;
  const raw = JSON.stringify(body);
  assert.ok(raw.length < 1024 * 1024);
  const reply = await h.request('POST', `${BASE}/servers`, { raw, headers: { 'content-type': 'application/json' } });
  assert.is(reply.status, 422);
  assert.is(reply.body.errors.length, 100);
  assert.is(reply.body.error_count, 90_000);
  assert.ok(reply.text.length < 20_000, `the answer is ${reply.text.length} bytes`);
  assert.ok(reply.body.detail.length < 2_000);
});

it('four unknown keys of 200,000 characters: each echoed cut to 64, the answer small', async ({ h }) => {
  const body: Record<string, unknown> = { ...server };
  for (const c of 'abcd') body[c.repeat(200_000)] = 1;
  const reply = await h.request('POST', `${BASE}/servers`, { body });
  assert.is(reply.status, 422);
  assert.equal(
    reply.body.errors.map((e: { field: string }) => e.field),
    [...'abcd'].map((c) => `${c.repeat(64)}…`),
  );
  assert.ok(reply.text.length < 5_000, `the answer is ${reply.text.length} bytes`);
});

it('every string and array of every resource is bounded by its schema', async ({ h }) => {
  const long = 'x'.repeat(70_000);
  for (const [resource, field] of [
    ['tags', 'color'],
    ['servers', 'hostname'],
    ['servers', 'passwd'],
    ['ssh-keys', 'public_key'],
    ['ssh-keys', 'private_key'],
    ['storage-areas', 'path'],
  ]) {
    const reply = await h.request('POST', `${BASE}/${resource}`, { body: { [field]: long } });
    assert.is(reply.status, 422, `${resource}.${field}`);
    const error = reply.body.errors.find((e: { field: string }) => e.field === field);
    assert.ok(
      error && ['too_long', 'invalid_format'].includes(error.code),
      `${resource}.${field}: ${JSON.stringify(error)}`,
    );
  }
});

it('an RSA key with a fabricated 40,000-bit modulus is refused with a 422 on the key', async ({ h }) => {
  const real = makeKey('rsa', 2048);
  const [type, blob, comment] = real.publicKey.split(' ');
  const wire = Buffer.from(blob, 'base64');
  // ssh-rsa wire format: string "ssh-rsa", mpint e, mpint n; replace n by 5,000 bytes of 0x7f.
  const typeLength = wire.readUInt32BE(0);
  const eStart = 4 + typeLength;
  const eLength = wire.readUInt32BE(eStart);
  const head = wire.subarray(0, eStart + 4 + eLength);
  const n = Buffer.alloc(5_000, 0x7f);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(n.length);
  const huge = `${type} ${Buffer.concat([head, length, n]).toString('base64')} ${comment}`;
  const reply = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'huge', user: 'root', public_key: huge, private_key: real.privateKey },
  });
  assert.is(reply.status, 422, reply.text);
  assert.equal([reply.body.errors[0].field, reply.body.errors[0].code], ['public_key', 'key_too_large']);
});

/** POSTs an import body made lazily by `chunks` as the admin; stops sending once the answer came. */
function streamedImport(h: Harness, token: string, chunks: () => string | undefined, length?: number) {
  const { hostname, port } = new URL(h.url);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` };
  if (length !== undefined) headers['Content-Length'] = String(length);
  return new Promise<{ status: number; body: any; sent: number }>((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request({ hostname, port, path: '/fr/api/import', method: 'POST', headers }, (res) => {
      answered = true;
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), sent }));
    });
    req.on('error', (error) => (answered ? undefined : reject(error)));
    const pump = () => {
      while (!answered) {
        const chunk = chunks();
        if (chunk === undefined) return req.end();
        sent += chunk.length;
        if (!req.write(chunk)) return req.once('drain', pump);
      }
    };
    pump();
  });
}

it('imports are read as a stream: junk, a huge entry, too many entries, too large a body; none read whole', async ({
  h,
}) => {
  const { token } = await h.service.write.issueToken(
    { name: 'importer', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const MB = 1024 * 1024;
  const junk = 'x'.repeat(64 * 1024);
  let left = 300 * MB;
  const refused = await streamedImport(h, token, () => {
    if (left <= 0) return undefined;
    left -= junk.length;
    return junk;
  });
  assert.equal([refused.status, refused.body.code], [400, 'invalid_json']);
  assert.ok(refused.sent < 100 * MB, `${refused.sent} bytes sent before the 400`);
  const huge = `{"format":"pmacontrol-config/1","resources":{"tags":[{"name":"${'y'.repeat(300_000)}"}]}}`;
  const entry = await streamedImport(h, token, once(huge));
  assert.equal([entry.status, entry.body.code], [413, 'payload_too_large']);
  const many = `{"format":"pmacontrol-config/1","resources":{"tags":[${'{},'.repeat(200_000)}{}]}}`;
  const count = await streamedImport(h, token, once(many));
  assert.equal([count.status, count.body.detail], [413, 'over 200000 entries']);
  const declared = await streamedImport(h, token, once('{}'), 65 * MB);
  assert.equal([declared.status, declared.body.code], [413, 'payload_too_large']);
  assert.is(h.service.revision, (await h.request('GET', '/readyz')).body.position - 1, 'nothing recorded');
});

/** A body of one piece. */
const once = (text: string) => {
  let given = false;
  return () => {
    if (given) return undefined;
    given = true;
    return text;
  };
};

it.run();
