import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateToken } from '../../src/application/tokens.js';
import type { AccessSettings } from '../../src/config.js';
import type { Role } from '../../src/domain/tokens/resource.js';
import { BASE, type Harness, send, startHarness } from '../support/harness.js';

/**
 * The access matrix: every kind of caller × every class of route, with the status each cell must
 * answer. A 401 always carries WWW-Authenticate; a bad token never falls back to anonymous.
 */

const ADMIN: Caller = { actor: 'test-setup', requestId: 'setup' };
type Caller = { actor: string; requestId: string };

interface World {
  h: Harness;
  tokens: Record<string, string>;
  tagId: number;
  serverId: number;
  serial: number;
}

async function issue(
  h: Harness,
  name: string,
  role: Role,
  expiresAt: string | null = null,
  secrets = false,
): Promise<string> {
  const { token } = await h.service.write.issueToken({ name, role, secrets, expiresAt }, ADMIN);
  return token;
}

async function world(anonymousRole: AccessSettings['anonymousRole']): Promise<World> {
  const h = await startHarness({ access: { anonymousRole, corsOrigins: [] } });
  const tokens: Record<string, string> = {
    reader: await issue(h, 'alice', 'reader'),
    writer: await issue(h, 'bob', 'writer'),
    admin: await issue(h, 'carol', 'admin'),
    // The monitoring platform: reads, and the secrets.
    platform: await issue(h, 'platform', 'reader', null, true),
    // The test clock starts on 2026-01-01: this one expired a year before.
    expired: await issue(h, 'dave', 'admin', '2025-01-01T00:00:00.000Z'),
    revoked: await issue(h, 'erin', 'admin'),
    malformed: 'pmc_tooshort',
    unknown: generateToken(),
  };
  const revoked = h.service.state.collections.tokens.inOrder().find((t) => t.name === 'erin')!;
  await h.service.write.revokeToken(revoked.id, ADMIN);
  const tag = await h.service.write.execute(
    { kind: 'create', resource: 'tags', input: { name: 'matrix', color: '#000000', background: '#FFFFFF' } },
    ADMIN,
  );
  await h.service.write.execute({ kind: 'patch', resource: 'tags', id: tag.id, input: { color: '#111111' } }, ADMIN);
  const server = await h.service.write.execute(
    {
      kind: 'create',
      resource: 'servers',
      input: { id_client: 99, id_environment: 1, name: 'm', ip: '10.9.9.9', login: 'pma', passwd: 'pw' },
    },
    ADMIN,
  );
  return { h, tokens, tagId: tag.id, serverId: server.id, serial: 0 };
}

type RouteClass = (w: World, headers: Record<string, string>) => Promise<{ status: number; headers: Headers }>;

const get =
  (path: (w: World) => string): RouteClass =>
  (w, headers) =>
    w.h.request('GET', path(w), { headers });

/** The feed answers its headers and then stays open: only the status is read. */
const feed: RouteClass = async (w, headers) => {
  const controller = new AbortController();
  const response = await fetch(`${w.h.url}/fr/api/changes/stream`, { headers, signal: controller.signal });
  controller.abort();
  return response;
};

const ROUTE_CLASSES: Record<string, RouteClass> = {
  openapi: get(() => '/fr/api/openApi'),
  whoami: get(() => '/fr/api/whoami'),
  'config read': get(() => `${BASE}/tags`),
  history: get((w) => `${BASE}/tags/${w.tagId}/history`),
  changes: get(() => '/fr/api/changes'),
  diff: get(() => '/fr/api/diff?from=0'),
  feed,
  'config write': (w, headers) =>
    w.h.request('POST', `${BASE}/tags`, {
      headers,
      body: { name: `t${++w.serial}`, color: '#000000', background: '#FFFFFF' },
    }),
  revert: (w, headers) => w.h.request('POST', `${BASE}/tags/${w.tagId}/revert`, { headers, body: { version: 1 } }),
  'secret read': get((w) => `${BASE}/servers/${w.serverId}/secret`),
  'tokens list': get(() => '/fr/api/tokens'),
  'token issue': (w, headers) =>
    w.h.request('POST', '/fr/api/tokens', { headers, body: { name: `n${++w.serial}`, role: 'reader' } }),
  'token revoke': async (w, headers) => {
    await issue(w.h, `victim${++w.serial}`, 'reader');
    const victim = w.h.service.state.collections.tokens.inOrder().at(-1)!;
    return w.h.request('DELETE', `/fr/api/tokens/${victim.id}`, { headers });
  },
};

const READS = ['config read', 'history', 'changes', 'diff', 'feed'];
const WRITES = ['config write', 'revert'];
const TOKENS = ['tokens list', 'token issue', 'token revoke'];
const CREATED = new Set(['config write', 'token issue']);

/** The expected status of each route class for a caller who may read, write, administer, or nothing. */
function expected(level: 'none' | Role | 'refused', secrets = false): Record<string, number> {
  const rank = ['none', 'reader', 'writer', 'admin'].indexOf(level);
  const cell = (needs: number, ok: number) => {
    if (level === 'refused') return 401;
    if (rank >= needs) return ok;
    return level === 'none' ? 401 : 403;
  };
  const statuses: Record<string, number> = { openapi: 200, whoami: level === 'refused' ? 401 : 200 };
  for (const name of READS) statuses[name] = cell(1, 200);
  for (const name of WRITES) statuses[name] = cell(2, CREATED.has(name) ? 201 : 200);
  for (const name of TOKENS) statuses[name] = cell(3, CREATED.has(name) ? 201 : 200);
  // Secrets: only a token issued with the right, whatever its role.
  statuses['secret read'] = level === 'refused' || level === 'none' ? 401 : secrets ? 200 : 403;
  return statuses;
}

const CALLERS: [
  string,
  AccessSettings['anonymousRole'],
  (w: World) => Record<string, string>,
  'none' | Role | 'refused' | 'reader+secrets',
][] = [
  ['anonymous (ANONYMOUS_ROLE=none)', 'none', () => ({}), 'none'],
  ['anonymous (ANONYMOUS_ROLE=reader)', 'reader', () => ({}), 'reader'],
  ['anonymous (ANONYMOUS_ROLE=writer)', 'writer', () => ({}), 'writer'],
  ...(['reader', 'writer', 'admin'] as const).map(
    (role) =>
      [
        `a ${role} token`,
        'none' as const,
        (w: World) => ({ Authorization: `Bearer ${w.tokens[role]}` }),
        role,
      ] as const,
  ),
  ...['expired', 'revoked', 'malformed', 'unknown'].flatMap((kind) =>
    (['none', 'writer'] as const).map(
      (anonymous) =>
        [
          `an ${kind} token (ANONYMOUS_ROLE=${anonymous})`,
          anonymous,
          (w: World) => ({ Authorization: `Bearer ${w.tokens[kind]}` }),
          'refused' as const,
        ] as const,
    ),
  ),
  ['a Basic header (ANONYMOUS_ROLE=writer)', 'writer', () => ({ Authorization: 'Basic YWRtaW46YWRtaW4=' }), 'refused'],
  [
    'a reader token issued with "secrets": true',
    'none',
    (w: World) => ({ Authorization: `Bearer ${w.tokens.platform}` }),
    'reader+secrets',
  ],
] as never;

const it = suite('the access matrix: callers × route classes');

for (const [who, anonymousRole, headersOf, level] of CALLERS) {
  it(who, async () => {
    const w = await world(anonymousRole);
    try {
      const want = level === 'reader+secrets' ? expected('reader', true) : expected(level);
      const got: Record<string, number> = {};
      for (const [name, call] of Object.entries(ROUTE_CLASSES)) {
        const reply = await call(w, headersOf(w));
        got[name] = reply.status;
        if (reply.status === 401)
          assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer realm="pmacontrol-config"/, name);
        else assert.is(reply.headers.get('www-authenticate'), null, name);
      }
      assert.equal(got, want);
    } finally {
      await w.h.close();
    }
  });
}

it.run();

const who = suite('who did it: the actor, the log line, whoami');

who('a token’s name is the actor of its events and of its log lines; the token is in neither', async () => {
  const w = await world('reader');
  try {
    const headers = { Authorization: `Bearer ${w.tokens.writer}`, 'X-Request-ID': 'bob-1' };
    const made = await w.h.request('POST', `${BASE}/tags`, {
      headers,
      body: { name: 'by-bob', color: '#000000', background: '#FFFFFF' },
    });
    assert.is(made.status, 201);
    const changes = await w.h.request('GET', '/fr/api/changes?request_id=bob-1');
    assert.equal(
      changes.body.items.map((c: { actor: string }) => c.actor),
      ['bob'],
    );
    const line = w.h.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === 'bob-1');
    assert.is(line.actor, 'bob');
    assert.is(line.route, `${BASE}/tags`);
    for (const token of Object.values(w.tokens)) {
      assert.not.ok(w.h.logs.join('').includes(token));
      assert.not.ok(changes.text.includes(token));
    }
  } finally {
    await w.h.close();
  }
});

who('whoami answers who the service takes the caller for', async () => {
  const w = await world('none');
  try {
    const anonymous = await w.h.request('GET', '/fr/api/whoami');
    assert.equal(anonymous.body, { actor: 'anonymous', role: 'none', secrets: false });
    const carol = await w.h.request('GET', '/fr/api/whoami', {
      headers: { Authorization: `Bearer ${w.tokens.admin}` },
    });
    assert.equal(carol.body, { actor: 'carol', role: 'admin', secrets: false });
    const revoked = await w.h.request('GET', '/fr/api/whoami', {
      headers: { Authorization: `Bearer ${w.tokens.revoked}` },
    });
    assert.is(revoked.status, 401);
    assert.is(revoked.headers.get('content-type'), 'application/problem+json');
    assert.match(revoked.body.detail, /revoked/);
    assert.match(revoked.headers.get('www-authenticate')!, /error="invalid_token"/);
  } finally {
    await w.h.close();
  }
});

who('a 401 for a refused token logs no actor; a 403 logs the actor who was refused', async () => {
  const w = await world('none');
  try {
    await send(w.h.url, 'GET', `${BASE}/tags`, {
      headers: { Authorization: `Bearer ${w.tokens.unknown}`, 'X-Request-ID': 'u-1' },
    });
    await send(w.h.url, 'GET', '/fr/api/tokens', {
      headers: { Authorization: `Bearer ${w.tokens.reader}`, 'X-Request-ID': 'r-1' },
    });
    const lines = w.h.logs.map((l) => JSON.parse(l));
    const unknown = lines.find((l) => l.request_id === 'u-1');
    assert.equal([unknown.status, unknown.actor, unknown.code], [401, null, 'unauthorized']);
    const refused = lines.find((l) => l.request_id === 'r-1');
    assert.equal([refused.status, refused.actor, refused.code], [403, 'alice', 'forbidden']);
  } finally {
    await w.h.close();
  }
});

who('tokens cannot be named like the service itself, and a name is unique among live tokens', async () => {
  const w = await world('none');
  try {
    const headers = { Authorization: `Bearer ${w.tokens.admin}` };
    for (const name of ['anonymous', 'System']) {
      const reply = await w.h.request('POST', '/fr/api/tokens', { headers, body: { name, role: 'reader' } });
      assert.is(reply.status, 422);
      assert.is(reply.body.errors[0].code, 'reserved');
    }
    const taken = await w.h.request('POST', '/fr/api/tokens', { headers, body: { name: 'alice', role: 'reader' } });
    assert.is(taken.status, 409);
    // erin's token was revoked: the name is free again.
    const again = await w.h.request('POST', '/fr/api/tokens', { headers, body: { name: 'erin', role: 'reader' } });
    assert.is(again.status, 201);
  } finally {
    await w.h.close();
  }
});

who.run();
