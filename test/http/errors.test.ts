import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newRequestId } from '../../src/http/middleware.js';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite<{ h: Harness }>('errors: problem+json for every refusal');
it.before(async (ctx) => {
  ctx.h = await startHarness();
});
it.after(async ({ h }) => h.close());

const PROBLEM_KEYS = ['code', 'detail', 'error', 'status', 'title', 'type'];

function assertProblem(reply: { status: number; headers: Headers; body: any }, status: number, code: string) {
  assert.is(reply.status, status);
  assert.is(reply.headers.get('content-type')?.split(';')[0], 'application/problem+json');
  assert.is(reply.body.code, code);
  assert.is(reply.body.status, status);
  assert.is(reply.body.error, reply.body.detail);
  for (const key of PROBLEM_KEYS) assert.ok(key in reply.body, `missing ${key}`);
}

it('400 invalid_json: not JSON, empty, or not an object', async ({ h }) => {
  for (const raw of ['{', '', 'null', '[1]', '"text"', '42', '{"a":1}x']) {
    const reply = await h.request('POST', `${BASE}/tags`, { raw, headers: { 'content-type': 'application/json' } });
    assertProblem(reply, 400, 'invalid_json');
  }
});

it('400 invalid_id: anything but a decimal integer from 1 to 2^53-1', async ({ h }) => {
  for (const id of ['0', '01', '-1', '+1', '1.0', '1e3', 'abc', '9007199254740992', '99999999999999999999', '%20']) {
    assertProblem(await h.request('GET', `${BASE}/tags/${id}`), 400, 'invalid_id');
    assertProblem(await h.request('DELETE', `${BASE}/servers/${id}`), 400, 'invalid_id');
  }
  assertProblem(await h.request('GET', `${BASE}/tags/9007199254740991`), 404, 'not_found');
});

it('400 invalid_query: unknown or malformed query parameters', async ({ h }) => {
  assertProblem(await h.request('GET', `${BASE}/tags?colour=red`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/servers?id_client=abc`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/servers?is_deleted=maybe`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/servers?limit=1&limit=2`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/servers?sort=passwd`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/servers?passwd=x`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/tags?limit=0`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/tags?constructor=1`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/servers?is_deleted=constructor`), 400, 'invalid_query');
  assertProblem(await h.request('GET', `${BASE}/environments/1?x=1`), 400, 'invalid_query');
});

it('404 unknown_resource and not_found for unknown paths', async ({ h }) => {
  assertProblem(await h.request('GET', `${BASE}/widgets`), 404, 'unknown_resource');
  assertProblem(await h.request('POST', `${BASE}/widgets`, { body: {} }), 404, 'unknown_resource');
  assertProblem(await h.request('GET', `${BASE}/tags/1/nothing`), 404, 'not_found');
  assertProblem(await h.request('GET', '/'), 404, 'not_found');
});

it('413 payload_too_large over 1 MiB', async ({ h }) => {
  const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
  assertProblem(
    await h.request('POST', `${BASE}/tags`, { raw: big, headers: { 'content-type': 'application/json' } }),
    413,
    'payload_too_large',
  );
});

it('415 unsupported_media_type without a JSON content type', async ({ h }) => {
  const body = JSON.stringify({ name: 'a', color: '#000000', background: '#000000' });
  assertProblem(
    await h.request('POST', `${BASE}/tags`, { raw: body, headers: { 'content-type': 'text/plain' } }),
    415,
    'unsupported_media_type',
  );
  assertProblem(await h.request('POST', `${BASE}/tags`, { raw: body }), 415, 'unsupported_media_type');
  assertProblem(
    await h.request('PUT', `${BASE}/tags/1`, {
      raw: body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    415,
    'unsupported_media_type',
  );
  assertProblem(
    await h.request('PATCH', `${BASE}/tags/1`, {
      raw: body,
      headers: { 'content-type': 'application/json; charset=latin1' },
    }),
    415,
    'unsupported_media_type',
  );
});

it('422 validation_failed lists each field: unknown fields, types, lengths, formats', async ({ h }) => {
  const reply = await h.request('POST', `${BASE}/servers`, {
    body: {
      id_client: 99,
      id_environment: 1,
      name: '',
      ip: 'not a host!',
      port: '3306',
      login: 'x',
      passwd: 'p',
      is_ssl: 2,
      colour: 1,
    },
  });
  assertProblem(reply, 422, 'validation_failed');
  const byField = Object.fromEntries(reply.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
  assert.equal(byField, {
    name: 'too_short',
    ip: 'invalid_format',
    port: 'invalid_type',
    is_ssl: 'invalid_type',
    colour: 'unknown_field',
  });
});

it('a "__proto__" key in a body is an unknown field, never a prototype', async ({ h }) => {
  // Bodies are copied with Object.assign (see the validator); its own "__proto__" key must not
  // become the copy's prototype, whose fields would then pass as given.
  const raw = '{"__proto__": {"name": "from-proto", "color": "#000000"}, "name": "own"}';
  const reply = await h.request('POST', `${BASE}/tags`, { raw, headers: { 'content-type': 'application/json' } });
  assertProblem(reply, 422, 'validation_failed');
  const codes = reply.body.errors.map((e: { field: string; code: string }) => `${e.field} ${e.code}`);
  assert.equal(codes, ['color required', 'background required', '__proto__ unknown_field']);
  const list = await h.request('GET', `${BASE}/tags?name=from-proto`);
  assert.equal(list.body.total ?? list.body.items.length, 0);
});

it('booleans take true/false and 0/1, nothing else; integers take JSON integers only', async ({ h }) => {
  for (const value of ['true', 'yes', 2, -1, null, 0.5]) {
    const reply = await h.request('POST', `${BASE}/clients`, {
      body: { libelle: `b${String(value)}`, is_monitored: value },
    });
    assertProblem(reply, 422, 'validation_failed');
  }
  const one = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'one', is_monitored: 1 } });
  assert.is(one.body.item.is_monitored, true);
  for (const port of ['22', 22.5, 0, 65536]) {
    const area = await h.request('POST', `${BASE}/aliases`, {
      body: { id_mysql_server: 1, dns: 'db.example.net', port },
    });
    assertProblem(area, 422, 'validation_failed');
    assert.ok(area.body.errors.some((e: { field: string }) => e.field === 'port'));
  }
});

it('strings are trimmed, then checked, then stored trimmed', async ({ h }) => {
  const blank = await h.request('POST', `${BASE}/tags`, {
    body: { name: '   ', color: '#000000', background: '#000000' },
  });
  assertProblem(blank, 422, 'validation_failed');
  const padded = await h.request('POST', `${BASE}/environments`, {
    body: { libelle: '  Staging  ', key: ' stg ', class: 'info', letter: ' S ' },
  });
  assert.is(padded.status, 201);
  assert.equal([padded.body.item.libelle, padded.body.item.key, padded.body.item.letter], ['Staging', 'stg', 'S']);
  const spaced = await h.request('POST', `${BASE}/environments`, {
    body: { libelle: 'Other', key: 'has space', class: 'info', letter: 'O' },
  });
  assertProblem(spaced, 422, 'validation_failed');
});

it('X-Request-ID is taken from the request or generated, and echoed on every response', async ({ h }) => {
  const given = await h.request('GET', `${BASE}/tags`, { headers: { 'X-Request-ID': 'job-42' } });
  assert.is(given.headers.get('x-request-id'), 'job-42');
  const generated = await h.request('GET', `${BASE}/widgets`);
  assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const refused = await h.request('GET', `${BASE}/tags`, { headers: { 'X-Request-ID': 'bad id with spaces' } });
  assert.match(refused.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

it('generated request ids are UUIDs of version 7: they sort in the order they were made', async ({ h }) => {
  const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const before = Date.now();
  const id = (await h.request('GET', `${BASE}/tags`)).headers.get('x-request-id') ?? '';
  assert.match(id, V7);
  const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  assert.ok(ms >= before && ms <= Date.now(), `its time (${ms}) is when it was made`);
  const times = [1, 2, 255, 256, 65_536, 2 ** 40, 2 ** 47 + 1];
  const ids = times.map((t) => newRequestId(t));
  assert.equal([...ids].sort(), ids);
  assert.is(new Set(times.map(() => newRequestId(5))).size, times.length, 'the same millisecond, still distinct');
});

const FUZZ_VALUES = [
  null,
  true,
  0,
  1,
  -1,
  1.5,
  2 ** 53,
  '',
  ' ',
  'x'.repeat(300),
  '#FFFFFF',
  '10.0.0.1',
  [],
  [1, 'a'],
  {},
  { a: 1 },
  '\u0000',
  '__proto__',
];
const FUZZ_FIELDS = [
  'id',
  'name',
  'color',
  'libelle',
  'port',
  'tags',
  'ip',
  'is_deleted',
  'public_key',
  'private_key',
  'géolocalisation',
  'pub',
  '__proto__',
  'constructor',
];
it('never a 500: a bounded fuzz of bodies, ids and methods', async ({ h }) => {
  const [values, fields] = [FUZZ_VALUES, FUZZ_FIELDS];
  const resources = ['tags', 'clients', 'environments', 'aliases', 'storage-areas', 'servers', 'ssh-keys'];
  let seed = 7;
  const pick = <T>(list: T[]) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return list[seed % list.length];
  };
  for (let i = 0; i < 300; i++) {
    const body: Record<string, unknown> = {};
    for (let j = 0; j < 4; j++) body[pick(fields)] = pick(values);
    const resource = pick(resources);
    const method = pick(['POST', 'PUT', 'PATCH', 'DELETE', 'GET']);
    const path = method === 'POST' ? `${BASE}/${resource}` : `${BASE}/${resource}/${pick(['1', '99', '5', '0'])}`;
    const raw = method === 'GET' ? undefined : JSON.stringify(body);
    const reply = await h.request(method, path, { raw, headers: { 'content-type': 'application/json' } });
    assert.ok(
      reply.status < 500,
      `${method} ${path} ${raw} → ${reply.status} ${h.logs.filter((l) => l.includes('unexpected')).pop()}`,
    );
  }
});

it.run();
