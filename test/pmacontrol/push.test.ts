import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, send, startHarness } from '../support/harness.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const PUSH = '/fr/api/pmacontrol/push';
const SETUP = { actor: 'setup', requestId: 'setup' };

/** PmaControl's own sample (config_sample/webservice.sample.json): numbers as strings, `@hostname`, an haproxy item. */
const SAMPLE = {
  mysql: [
    {
      fqdn: 'www.google.com',
      display_name: '@hostname',
      port: '3306',
      login: 'pmacontrol',
      password: 'secret_password',
      tag: ['text', 'datacenter1'],
      organization: '68Koncept',
      environment: 'test',
      ssh_ip: '10.10.1.1',
      ssh_port: '22',
    },
  ],
  haproxy: [
    {
      fqdn: 'my.haproxy.com',
      port: '3307',
      organization: '68Koncept',
      tag: ['text', 'datacenter1'],
      environment: 'test',
      stats: { path: '/haproxy_stats;csv', port: '9000', login: 'haproxy', password: 'secret_password' },
    },
  ],
};

/** A fleet of `count` servers as an automation would push it, each with its own password. */
const fleet = (count: number, password = (i: number) => `pw-${i}`) => ({
  mysql: Array.from({ length: count }, (_, i) => ({
    fqdn: `db${i}.example.net`,
    port: String(3306 + (i % 2)),
    login: 'monitor',
    password: password(i),
    tag: [i % 2 ? 'odd' : 'even', 'fleet'],
    organization: 'ACME',
    environment: 'prod',
    ssh_port: 22,
  })),
});

async function token(h: Harness, name: string, role: 'reader' | 'writer' | 'admin', secrets = false) {
  return (await h.service.write.issueToken({ name, role, secrets, expiresAt: null }, SETUP)).token;
}

const bearer = (value: string) => ({ Authorization: `Bearer ${value}` });
const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

const it = suite(
  'POST /fr/api/pmacontrol/push: PmaControl’s push, upsert by (ip, port), one append, nothing for what is the same',
);

/** What PmaControl's sample push leaves: its server, client and tags as PmaControl makes them, in one append. */
async function assertSampleStored(h: Harness, writer: string): Promise<void> {
  const server = (await h.request('GET', `${BASE}/servers/1`, { headers: bearer(writer) })).body.item;
  assert.equal(
    [server.ip, server.port, server.hostname, server.name, server.display_name, server.login, server.ssh_nat],
    ['www.google.com', 3306, 'www.google.com', 'www.google.com', 'www.google.com', 'pmacontrol', '10.10.1.1'],
  );
  assert.is(server.ssh_login, 'root', "PmaControl's default for a server it registers");
  assert.is(server.id_environment, 6, '"test" is the key of PmaControl\'s environment 6');
  const client = (await h.request('GET', `${BASE}/clients/${server.id_client}`, { headers: bearer(writer) })).body;
  assert.is(client.item.libelle, '68Koncept');
  const tags = (await h.request('GET', `${BASE}/tags`, { headers: bearer(writer) })).body.items;
  // PmaControl's colours for a tag it makes: white on the first six hex digits of the name's MD5.
  const md5 = (name: string) => `#${createHash('md5').update(name).digest('hex').slice(0, 6)}`;
  assert.equal(
    tags.map((t: { name: string; color: string; background: string }) => [t.name, t.color, t.background]),
    [
      ['text', '#FFFFFF', md5('text')],
      ['datacenter1', '#FFFFFF', md5('datacenter1')],
    ],
  );
  assert.equal(
    server.tags,
    tags.map((t: { id: number }) => t.id),
  );
  const changes = (await h.request('GET', '/fr/api/changes?limit=100', { headers: bearer(writer) })).body.items;
  const pushed = changes.filter((c: { actor: string }) => c.actor === 'ansible');
  assert.equal(
    pushed.map((c: { type: string }) => c.type),
    ['ClientCreated', 'TagCreated', 'TagCreated', 'ServerCreated'],
  );
  assert.is(new Set(pushed.map((c: { request_id: string }) => c.request_id)).size, 1, 'one request, one append');
}

it("PmaControl's own sample: the server, its client, environment and tags; haproxy listed as ignored", async () => {
  const h = await startHarness({ access: { anonymousRole: 'none', corsOrigins: [] } });
  try {
    const writer = await token(h, 'ansible', 'writer');
    const first = await h.request('POST', PUSH, { body: SAMPLE, headers: bearer(writer) });
    assert.is(first.status, 200, first.text);
    // PmaControl's own answer, word for word, then this service's detail.
    assert.equal([first.body.authenticate, first.body.error], ['ok', []]);
    assert.equal(first.body.mysql, {
      inserted: ['www.google.com (www.google.com:3306)'],
      updated: [],
      failed: [],
    });
    assert.equal(first.body.details.inserted, [{ index: 0, server: 'www.google.com:3306', id: 1 }]);
    assert.equal([first.body.details.updated, first.body.details.failed, first.body.details.problems], [[], [], []]);
    assert.equal(first.body.details.haproxy.ignored, [{ index: 0, server: 'my.haproxy.com:3307' }]);
    await assertSampleStored(h, writer);
  } finally {
    await h.close();
  }
});

it('the same push again records 0 events; a changed password records exactly that change', async () => {
  const h = await startHarness();
  try {
    const first = await h.request('POST', PUSH, { body: fleet(20) });
    assert.is(first.body.details.inserted.length, 20, first.text);
    const after = h.service.revision;
    const again = await h.request('POST', PUSH, { body: fleet(20) });
    assert.is(again.status, 200);
    assert.equal([again.body.mysql.inserted.length, again.body.mysql.updated.length], [0, 0]);
    assert.is(again.body.details.unchanged.length, 20);
    assert.is(h.service.revision, after, 'the same inventory recorded nothing');

    const changed = await h.request('POST', PUSH, { body: fleet(20, (i) => (i === 7 ? 'rotated' : `pw-${i}`)) });
    assert.equal(
      changed.body.details.updated.map((item: { index: number }) => item.index),
      [7],
    );
    assert.is(h.service.revision, after + 1, 'one event');
    const last = (await h.request('GET', '/fr/api/changes?order=desc&limit=1')).body.items[0];
    assert.equal([last.type, last.id, last.data.changes], ['ServerUpdated', 8, { passwd: '[redacted]' }]);
    const platform = await token(h, 'platform', 'reader', true);
    const secret = await h.request('GET', `${BASE}/servers/8/secret`, { headers: bearer(platform) });
    assert.is(secret.body.passwd, 'rotated');
  } finally {
    await h.close();
  }
});

it('a malformed item is listed with its problems while the valid ones are applied; tags are only added', async () => {
  const h = await startHarness();
  try {
    await h.request('POST', PUSH, { body: fleet(2) });
    await h.request('PATCH', `${BASE}/servers/1`, { body: { tags: [1, 2, 3] } }).then((r) => assert.is(r.status, 200));
    const body = {
      mysql: [
        { ...fleet(2).mysql[0], tag: ['even'] },
        { fqdn: 'db9.example.net', port: 'abc', login: 'x', password: 'y', environment: 'prod' },
        { fqdn: 'new.example.net', login: 'x', password: 'y' },
        { fqdn: 'ok.example.net', login: 'x', password: 'y', environment: 'Staging area', pasword: 'typo' },
        'not an object',
        { fqdn: 'ok2.example.net', login: '', password: 'y', environment: 'prod' },
        { fqdn: 'db5.example.net', port: 3306, login: 'x', password: 'y', environment: 'prod', tag: ['t'.repeat(51)] },
        { fqdn: 'fine.example.net', port: 3310, login: 'x', password: 'y', environment: 'Staging area' },
      ],
    };
    const reply = await h.request('POST', PUSH, { body });
    assert.is(reply.status, 200, reply.text);
    const indexes = (list: { index: number }[]) => list.map((item) => item.index);
    assert.equal(indexes(reply.body.details.unchanged), [0], 'a tag set by other means stays');
    assert.equal(indexes(reply.body.details.inserted), [7]);
    assert.equal(indexes(reply.body.details.failed), [1, 2, 3, 4, 5, 6]);
    assert.is(reply.body.mysql.failed.length, 6);
    assert.match(reply.body.mysql.failed[0], /^db9\.example\.net:abc: /);
    const fields = reply.body.details.problems.map((p: { field: string }) => p.field);
    assert.equal(
      reply.body.error,
      reply.body.details.problems.map((p: { field: string; message: string }) => `${p.field}: ${p.message}`),
    );
    for (const field of [
      'mysql[1].port',
      'mysql[2].environment',
      'mysql[3].pasword',
      'mysql[4]',
      'mysql[5].login',
      'mysql[6].tag[0]',
    ]) {
      assert.ok(fields.includes(field), `${field} in ${fields.join(', ')}`);
    }
    const envs = (await h.request('GET', `${BASE}/environments?libelle=Staging area`)).body.items;
    assert.equal(
      envs.map((e: { key: string; letter: string }) => [e.key, e.letter]),
      [['stagingarea', 'S']],
      'created once, by the item that was applied',
    );
    const tags = (await h.request('GET', `${BASE}/tags`)).body.items.map((t: { name: string }) => t.name);
    assert.not.ok(tags.includes('t'.repeat(51)));
    assert.equal((await h.request('GET', `${BASE}/servers/1`)).body.item.tags, [1, 2, 3]);
  } finally {
    await h.close();
  }
});

it('a body that is not a push is refused whole; a reader gets 403; without a token, a challenge naming Basic', async () => {
  const h = await startHarness({ access: { anonymousRole: 'none', corsOrigins: [] } });
  try {
    const writer = await token(h, 'writer', 'writer');
    const reader = await token(h, 'reader', 'reader');
    const wrong = await h.request('POST', PUSH, { body: { servers: [] }, headers: bearer(writer) });
    assert.equal([wrong.status, wrong.body.code, wrong.body.errors[0].field], [422, 'validation_failed', 'servers']);
    const notList = await h.request('POST', PUSH, { body: { mysql: {} }, headers: bearer(writer) });
    assert.is(notList.status, 422);
    assert.is((await h.request('POST', PUSH, { body: SAMPLE, headers: bearer(reader) })).status, 403);
    assert.is((await h.request('POST', PUSH, { body: SAMPLE, headers: basic('bob', reader) })).status, 403);
    const none = await h.request('POST', PUSH, { body: SAMPLE });
    assert.is(none.status, 401);
    assert.match(none.headers.get('WWW-Authenticate') ?? '', 'Basic realm="pmacontrol-config"');
    const bad = await h.request('POST', PUSH, { body: SAMPLE, headers: basic('ansible', 'pmc_wrong') });
    assert.is(bad.status, 401);
    const elsewhere = await h.request('GET', `${BASE}/servers`, { headers: basic('ansible', writer) });
    assert.is(elsewhere.status, 401, 'Basic is taken by the push only');
    assert.not.match(elsewhere.headers.get('WWW-Authenticate') ?? '', 'Basic');
    assert.is(h.service.revision > 0, true);
    const ok = await h.request('POST', PUSH, { body: SAMPLE, headers: basic('anything', writer) });
    assert.is(ok.status, 200, ok.text);
    const changes = (await h.request('GET', '/fr/api/changes?type=ServerCreated', { headers: bearer(writer) })).body;
    assert.equal(
      changes.items.map((c: { actor: string }) => c.actor),
      ['writer'],
      "the token's name is the actor, not the Basic user",
    );
  } finally {
    await h.close();
  }
});

it('an Idempotency-Key is honoured: the retry gets the first answer and records nothing', async () => {
  const h = await startHarness();
  try {
    const headers = { 'Idempotency-Key': 'push-2026-11-28' };
    const first = await h.request('POST', PUSH, { body: fleet(3), headers });
    const after = h.service.revision;
    const retry = await h.request('POST', PUSH, { body: fleet(3), headers });
    assert.equal([retry.status, retry.text], [200, first.text]);
    assert.is(retry.headers.get('Idempotent-Replayed'), 'true');
    assert.is(h.service.revision, after);
  } finally {
    await h.close();
  }
});

it('the password is in no answer, change, log line or event', async () => {
  const h = await startHarness();
  try {
    const body = fleet(3, (i) => `Sup3r-S3cret-${i}-pushed`);
    const texts = [
      (await h.request('POST', PUSH, { body })).text,
      (await h.request('POST', PUSH, { body: fleet(3, (i) => `Sup3r-S3cret-${i}-again`) })).text,
      (await h.request('GET', '/fr/api/changes?limit=100')).text,
      (await h.request('GET', `${BASE}/servers`)).text,
      (await h.request('GET', '/fr/api/export')).text,
      JSON.stringify(await h.store.readAll()),
      JSON.stringify([...h.readModels.lines()]),
      h.logs.join('\n'),
    ].join('\n');
    assert.not.ok(texts.includes('Sup3r-S3cret'), 'a pushed password leaked');
  } finally {
    await h.close();
  }
});

it('a real service: Basic with the token as password, and no file of the data dir holds the password', async () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir, ANONYMOUS_ROLE: 'none' };
  const first = await spawnService(env);
  await first.stop();
  const issued = await runCli(['token', 'create', '--name', 'ansible', '--role', 'writer'], env);
  const writer = issued.stdout.trim().split('\n').pop()!;
  const service = await spawnService(env);
  try {
    const body = { mysql: [{ ...fleet(1).mysql[0], password: 'Pushed-Pa55word-In-Clear' }] };
    const reply = await send(service.url, 'POST', PUSH, { body, headers: basic('ansible', writer) });
    assert.is(reply.status, 200, reply.text);
    assert.is(reply.body.details.inserted.length, 1);
  } finally {
    await service.stop();
  }
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
  assert.ok(files.length > 0);
  for (const file of files) {
    const bytes = readFileSync(join(file.parentPath, file.name));
    assert.not.ok(bytes.includes('Pushed-Pa55word-In-Clear'), `${file.name} holds the password`);
  }
  assert.not.ok(service.output().includes('Pushed-Pa55word'), 'the log holds the password');
});

it.run();
