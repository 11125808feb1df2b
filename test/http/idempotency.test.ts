import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tokenDigest } from '../../src/application/tokens.js';
import { InMemoryEventStore } from '../../src/event-store/in-memory/store.js';
import type { AppendResult, EventToAppend, ExpectedRevision } from '../../src/event-store/port.js';
import { BASE, type Harness, type Reply, startHarness, type TestClock, testClock } from '../support/harness.js';

/** Appends wait while `hold` is set: a write can be kept in flight. */
class HeldStore extends InMemoryEventStore {
  hold?: Promise<void>;

  override async append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    await this.hold;
    return super.append(stream, events, expected);
  }
}

const it = suite<{ h: Harness; clock: TestClock; store: HeldStore }>('Idempotency-Key: safe retries');

it.before.each(async (ctx) => {
  ctx.clock = testClock();
  ctx.store = new HeldStore();
  ctx.h = await startHarness({ clock: ctx.clock, store: ctx.store });
});
it.after.each(async ({ h }) => h.close());

const tag = (name: string) => ({ name, color: '#000000', background: '#FFFFFF' });
const keyed = (key: string, extra: Record<string, string> = {}) => ({ 'Idempotency-Key': key, ...extra });
const same = (a: Reply, b: Reply) => {
  assert.is(b.status, a.status);
  assert.is(b.text, a.text, 'byte for byte');
  for (const header of ['location', 'etag', 'content-type']) assert.is(b.headers.get(header), a.headers.get(header));
};

it('a repeat answers what the first answered, byte for byte, marked replayed, and records nothing', async ({ h }) => {
  const first = await h.request('POST', `${BASE}/tags`, { body: tag('once'), headers: keyed('k-1') });
  assert.is(first.status, 201);
  assert.is(first.headers.get('idempotent-replayed'), null);
  const revision = h.service.revision;
  // The entry changes afterwards: the repeat still answers the entry as it was then.
  await h.request('PATCH', `${BASE}/tags/${first.body.id}`, { body: { color: '#222222' } });
  const after = h.service.revision;
  const again = await h.request('POST', `${BASE}/tags`, { body: tag('once'), headers: keyed('k-1') });
  same(first, again);
  assert.is(again.headers.get('idempotent-replayed'), 'true');
  assert.is(again.body.item.color, '#000000');
  const logged = h.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.method === 'POST');
  assert.equal(
    logged.map((l) => l.replayed ?? false),
    [false, true],
  );
  assert.is(h.service.revision, after, 'nothing recorded by the repeat');
  assert.ok(after > revision);
  const tags = await h.request('GET', `${BASE}/tags`);
  assert.is(tags.body.items.filter((t: { name: string }) => t.name === 'once').length, 1);
});

it('PUT, PATCH, DELETE and revert replay too, also when the first changed nothing', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/tags`, { body: tag('t') });
  const path = `${BASE}/tags/${made.body.id}`;
  const cases: [string, string, unknown][] = [
    ['PATCH', path, { color: '#333333' }],
    ['PATCH', path, { color: '#333333' }], // no change: a RequestRecorded event keeps the answer
    ['PUT', path, tag('t2')],
    ['POST', `${path}/revert`, { version: 1 }],
    ['DELETE', path, undefined],
  ];
  for (const [i, [method, url, body]] of cases.entries()) {
    const first = await h.request(method, url, { body, headers: keyed(`m-${i}`) });
    assert.ok(first.status < 300, `${method} ${first.text}`);
    const revision = h.service.revision;
    const again = await h.request(method, url, { body, headers: keyed(`m-${i}`) });
    same(first, again);
    assert.is(again.headers.get('idempotent-replayed'), 'true');
    assert.is(h.service.revision, revision, `${method}: the repeat records nothing`);
  }
});

it('the same key with another body, path or method is a 422 idempotency_key_reused', async ({ h }) => {
  await h.request('POST', `${BASE}/tags`, { body: tag('a'), headers: keyed('k') });
  const others = [
    await h.request('POST', `${BASE}/tags`, { body: tag('b'), headers: keyed('k') }),
    await h.request('POST', `${BASE}/clients`, { body: { libelle: 'a' }, headers: keyed('k') }),
    await h.request('PUT', `${BASE}/tags/1`, { body: tag('a'), headers: keyed('k') }),
    await h.request('DELETE', `${BASE}/tags/1`, { headers: keyed('k') }),
  ];
  for (const reply of others) {
    assert.is(reply.status, 422);
    assert.is(reply.body.code, 'idempotency_key_reused', reply.text);
    assert.equal(reply.body.errors, [{ field: 'Idempotency-Key', code: 'reused', message: reply.body.detail }]);
  }
});

it('keys are per actor: another caller with the same key makes its own request', async ({ h }) => {
  const { token } = await h.service.write.issueToken(
    { name: 'ansible', role: 'writer', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const anonymous = await h.request('POST', `${BASE}/tags`, { body: tag('x'), headers: keyed('shared') });
  const ansible = await h.request('POST', `${BASE}/tags`, {
    body: tag('y'),
    headers: keyed('shared', { Authorization: `Bearer ${token}` }),
  });
  assert.equal([anonymous.status, ansible.status], [201, 201]);
  assert.is.not(ansible.body.id, anonymous.body.id);
  assert.is(ansible.headers.get('idempotent-replayed'), null);
});

it('a repeat while the first is still being processed is a 409; once done, the repeat replays', async ({
  h,
  store,
}) => {
  let release = () => {};
  store.hold = new Promise<void>((resolve) => (release = resolve));
  const first = h.request('POST', `${BASE}/tags`, { body: tag('slow'), headers: keyed('slow') });
  let during: Reply;
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    during = await h.request('POST', `${BASE}/tags`, { body: tag('slow'), headers: keyed('slow') });
  } finally {
    store.hold = undefined;
    release();
  }
  assert.is(during.status, 409);
  assert.is(during.body.code, 'conflict');
  const answered = await first;
  assert.is(answered.status, 201);
  const after = await h.request('POST', `${BASE}/tags`, { body: tag('slow'), headers: keyed('slow') });
  same(answered, after);
});

it('a request that failed is not recorded: the same key and body may be retried once it can succeed', async ({ h }) => {
  const server = {
    id_client: 99,
    id_environment: 1,
    name: 'db1',
    ip: '10.0.0.1',
    port: 3306,
    login: 'pma',
    passwd: 'pw',
    tags: [7],
  };
  const refused = await h.request('POST', `${BASE}/servers`, { body: server, headers: keyed('retry-me') });
  assert.is(refused.status, 422);
  await h.request('POST', `${BASE}/tags`, { body: { id: 7, ...tag('seven') } });
  const retried = await h.request('POST', `${BASE}/servers`, { body: server, headers: keyed('retry-me') });
  assert.is(retried.status, 201);
  assert.is(retried.headers.get('idempotent-replayed'), null);
});

it('after 24 hours a key is forgotten: the same request is made again', async ({ h, clock }) => {
  const first = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'daily' }, headers: keyed('day') });
  clock.advance(23 * 3_600_000);
  const within = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'daily' }, headers: keyed('day') });
  assert.is(within.headers.get('idempotent-replayed'), 'true');
  clock.advance(2 * 3_600_000);
  // Decided again, not replayed: the libelle is taken by the first one now.
  const later = await h.request('POST', `${BASE}/clients`, { body: { libelle: 'daily' }, headers: keyed('day') });
  assert.equal([later.status, later.body.code], [409, 'conflict']);
  assert.is(later.headers.get('idempotent-replayed'), null);
  assert.is(first.status, 201);
});

it('a malformed Idempotency-Key is a 400 invalid_header, and nothing is written', async ({ h }) => {
  const revision = h.service.revision;
  for (const key of ['x'.repeat(256), 'has space', 'tab\there', 'é']) {
    const reply = await h.request('POST', `${BASE}/clients`, {
      body: { libelle: 'never' },
      headers: { 'Idempotency-Key': Buffer.from(key).toString('latin1') },
    });
    assert.is(reply.status, 400, key);
    assert.is(reply.body.code, 'invalid_header');
  }
  assert.is(h.service.revision, revision);
});

it('issuing a token with a key: the repeat says it was issued, without the token, which is kept nowhere', async ({
  h,
  store,
}) => {
  const { token: admin } = await h.service.write.issueToken(
    { name: 'root', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const headers = keyed('tok', { Authorization: `Bearer ${admin}` });
  const first = await h.request('POST', '/fr/api/tokens', { body: { name: 'ci', role: 'reader' }, headers });
  const again = await h.request('POST', '/fr/api/tokens', { body: { name: 'ci', role: 'reader' }, headers });
  assert.is(first.status, 201);
  const token = first.body.token as string;
  assert.equal([again.status, again.body.code, again.headers.get('idempotent-replayed')], [409, 'conflict', 'true']);
  assert.equal(again.body.conflict, { resource: 'tokens', id: first.body.item.id, fields: ['Idempotency-Key'] });
  assert.not.ok(again.text.includes(token), 'the repeat does not show the token');
  const events = await store.readAll();
  const kept = events.flatMap((e) => {
    const sealed = (e.metadata as { idempotency?: { response: string } }).idempotency?.response;
    return sealed ? [h.service.write.openSealed(sealed) ?? ''] : [];
  });
  assert.is(kept.length, 1);
  assert.not.ok(kept[0].includes(token), 'the kept answer, opened, holds no token');
  const log = JSON.stringify(events);
  for (const secret of [token, tokenDigest(token), admin, tokenDigest(admin)]) assert.not.ok(log.includes(secret));
  const changes = await h.request('GET', '/fr/api/changes?resource=tokens', { headers });
  assert.equal(
    changes.body.items.map((c: { type: string }) => c.type),
    ['TokenIssued', 'TokenIssued'],
  );
  assert.not.ok(changes.text.includes(token));
});

it('revoking a token with a key used before for another request: a 422, as the OpenAPI document says', async ({
  h,
}) => {
  const { token: admin, entry } = await h.service.write.issueToken(
    { name: 'root', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const headers = keyed('revoke-once', { Authorization: `Bearer ${admin}` });
  const other = await h.request('POST', '/fr/api/tokens', { body: { name: 'ci', role: 'reader' }, headers });
  assert.is(other.status, 201);
  // The harness checks every answer against the document: an undocumented 422 would fail here.
  const reused = await h.request('DELETE', `/fr/api/tokens/${entry.id}`, { headers });
  assert.equal([reused.status, reused.body.code], [422, 'idempotency_key_reused']);
});

it.run();
