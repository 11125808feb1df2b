import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite<{ h: Harness }>('HTTP hardening: headers on every answer, CORS only for the listed origins');

const CONSOLE = 'https://console.example.net';

it.before(async (ctx) => {
  ctx.h = await startHarness({ access: { anonymousRole: 'none', corsOrigins: [CONSOLE] } });
});
it.after(async ({ h }) => h.close());

const raw = (h: Harness, method: string, path: string, headers: Record<string, string> = {}) =>
  fetch(h.url + path, { method, headers });

it('nosniff and no-store on every answer, success or refusal; no framework banner', async ({ h }) => {
  const { token } = await h.service.write.issueToken(
    { name: 'ops', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const auth = { Authorization: `Bearer ${token}` };
  const answers = [
    await raw(h, 'GET', `${BASE}/tags`, auth), // 200
    await raw(h, 'GET', `${BASE}/tags`), // 401
    await raw(h, 'GET', '/fr/api/tokens', { Authorization: 'Bearer pmc_nope' }), // 401
    await raw(h, 'GET', `${BASE}/tags/77`, auth), // 404
    await raw(h, 'GET', '/nowhere'), // 404
    await raw(h, 'PATCH', `${BASE}/tags`, auth), // 405
    await raw(h, 'OPTIONS', `${BASE}/tags`), // 204
    await raw(h, 'HEAD', `${BASE}/tags`, auth), // 200
    await raw(h, 'GET', '/fr/api/openApi'), // 200
  ];
  assert.equal(
    answers.map((a) => a.status),
    [200, 401, 401, 404, 404, 405, 204, 200, 200],
  );
  for (const answer of answers) {
    assert.is(answer.headers.get('x-content-type-options'), 'nosniff', answer.url);
    assert.is(answer.headers.get('cache-control'), 'no-store', answer.url);
    assert.is(answer.headers.get('x-powered-by'), null);
    assert.is(answer.headers.get('server'), null);
    await answer.arrayBuffer();
  }
});

it('a listed origin gets CORS headers; a preflight needs no token and names every header a client sends', async ({
  h,
}) => {
  const preflight = await raw(h, 'OPTIONS', `${BASE}/servers/1`, {
    Origin: CONSOLE,
    'Access-Control-Request-Method': 'PATCH',
    'Access-Control-Request-Headers': 'authorization, idempotency-key, if-match, content-type',
  });
  assert.is(preflight.status, 204);
  assert.is(preflight.headers.get('access-control-allow-origin'), CONSOLE);
  assert.ok(preflight.headers.get('access-control-allow-methods')!.split(', ').includes('PATCH'));
  const allowed = preflight.headers.get('access-control-allow-headers')!.toLowerCase();
  for (const header of ['authorization', 'idempotency-key', 'if-match', 'content-type', 'last-event-id'])
    assert.ok(allowed.includes(header), header);
  assert.match(preflight.headers.get('vary') ?? '', /Origin/);

  const refused = await raw(h, 'GET', `${BASE}/tags`, { Origin: CONSOLE });
  assert.is(refused.status, 401);
  assert.is(refused.headers.get('access-control-allow-origin'), CONSOLE, 'the browser may read the 401');
  assert.match(refused.headers.get('access-control-expose-headers')!, /WWW-Authenticate/);
});

it("a listed origin's preflight to an unknown path: a 404 problem+json the browser may read, never a 500", async ({
  h,
}) => {
  for (const path of ['/nowhere', `${BASE}/no-such-resource`, `${BASE}/tags/1/nothing`]) {
    const preflight = await raw(h, 'OPTIONS', path, { Origin: CONSOLE, 'Access-Control-Request-Method': 'GET' });
    assert.is(preflight.status, 404, path);
    assert.match(preflight.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.is(preflight.headers.get('access-control-allow-origin'), CONSOLE);
    assert.is((await preflight.json()).status, 404);
  }
});

it('an origin not listed gets no CORS header at all', async ({ h }) => {
  const preflight = await raw(h, 'OPTIONS', `${BASE}/tags`, {
    Origin: 'https://evil.example.com',
    'Access-Control-Request-Method': 'DELETE',
  });
  assert.is(preflight.status, 204);
  for (const [name] of preflight.headers) assert.not.ok(name.startsWith('access-control-'), name);
});

it.run();

const off = suite('CORS is off by default');

off('no origin gets CORS headers when CORS_ORIGINS is empty', async () => {
  const h = await startHarness();
  try {
    const preflight = await raw(h, 'OPTIONS', `${BASE}/tags`, {
      Origin: CONSOLE,
      'Access-Control-Request-Method': 'POST',
    });
    const get = await raw(h, 'GET', `${BASE}/tags`, { Origin: CONSOLE });
    for (const answer of [preflight, get]) {
      for (const [name] of answer.headers) assert.not.ok(name.startsWith('access-control-'), name);
      await answer.arrayBuffer();
    }
  } finally {
    await h.close();
  }
});

off.run();
