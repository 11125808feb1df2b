import { createConnection } from 'mysql2/promise';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPmaControlCrypt, readPmaControlCryptKey } from '../../src/pmacontrol/crypt.js';
import { PUSH_BOUNDS } from '../../src/pmacontrol/push-request.js';
import { BASE, send, startHarness } from '../support/harness.js';
import { freshDatabase, mariadbUrl, skipWithoutMariadb } from '../support/mariadb.js';
import { writeCryptConfig } from '../support/php.js';
import { withSchema } from '../support/pmacontrol-tables.js';
import { spawnService, tempDir } from '../support/process.js';

const PUSH = '/fr/api/pmacontrol/push';
const url = await mariadbUrl();
const it = suite('the push: bounded, strict about what it takes, and PmaControl’s own credentials');

const item = (extra: Record<string, unknown> = {}) => ({
  fqdn: 'db1.example.net',
  login: 'monitor',
  password: 'pw',
  environment: 'prod',
  ...extra,
});

/** Sends bytes as they are (a body that is not UTF-8 cannot be a JS string). */
async function raw(baseUrl: string, bytes: Buffer) {
  const response = await fetch(baseUrl + PUSH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new Uint8Array(bytes),
  });
  return { status: response.status, body: await response.json() };
}

it('millions of tiny items are refused as soon as they are past the bound (413), read as a stream', async () => {
  const h = await startHarness();
  try {
    // 10 MiB of `{}`: about 3.5 million items.
    const junk = `{"mysql":[${'{},'.repeat((10 * 1024 * 1024) / 3)}{}]}`;
    const reply = await raw(h.url, Buffer.from(junk));
    assert.equal([reply.status, reply.body.code], [413, 'payload_too_large'], JSON.stringify(reply.body));
    assert.match(reply.body.detail, `more than ${PUSH_BOUNDS.values} JSON values`);
    const deep = `{"mysql":[${'['.repeat(50)}${']'.repeat(50)}]}`;
    assert.is((await raw(h.url, Buffer.from(deep))).status, 413, 'nesting is bounded too');
    assert.is((await h.request('GET', `${BASE}/servers`)).body.total, 0, 'nothing recorded');
    const fine = await h.request('POST', PUSH, { body: { mysql: [item()] } });
    assert.is(fine.status, 200, 'the service goes on');
  } finally {
    await h.close();
  }
});

it('a number sent for a text field is refused, never turned into "Infinity"; the item fails alone', async () => {
  const h = await startHarness();
  try {
    const text = '{"mysql":[{"fqdn":"db1.example.net","login":1e400,"password":"pw","environment":"prod"}]}';
    const reply = await h.request('POST', PUSH, { raw: text, headers: { 'content-type': 'application/json' } });
    assert.is(reply.status, 200, reply.text);
    assert.equal(reply.body.details.failed.length, 1);
    assert.equal(reply.body.error, [
      'mysql[0].login: must be a string: a number is not kept as it was written; quote it',
    ]);
    assert.is((await h.request('GET', `${BASE}/servers`)).body.total, 0);
  } finally {
    await h.close();
  }
});

it('a password that is not UTF-8 is refused (400), never stored with a replacement character', async () => {
  const h = await startHarness();
  try {
    const start = Buffer.from('{"mysql":[{"fqdn":"db1.example.net","login":"m","environment":"prod","password":"ab');
    const body = Buffer.concat([start, Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
    const reply = await raw(h.url, body);
    assert.equal([reply.status, reply.body.detail], [400, 'the body is not valid UTF-8']);
    assert.is((await h.request('GET', `${BASE}/servers`)).body.total, 0);
    const other = await fetch(`${h.url}${BASE}/tags`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([
        Buffer.from('{"name":"t'),
        Buffer.from([0xff]),
        Buffer.from('","color":"#000000","background":"#FFFFFF"}'),
      ]),
    });
    assert.is(other.status, 400, 'every JSON body is UTF-8, strictly');
  } finally {
    await h.close();
  }
});

async function assertWebserviceUsers(service: { url: string; output(): string }): Promise<void> {
  const basic = (user: string, password: string) => ({
    Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  });
  const body = { mysql: [item()] };
  const pushed = await send(service.url, 'POST', PUSH, { body, headers: basic('PUSH-JOB', 'Job-Pa55') });
  assert.equal([pushed.status, pushed.body.authenticate], [200, 'ok'], pushed.text);
  const changes = (await send(service.url, 'GET', '/fr/api/changes')).body.items;
  assert.ok(changes.length > 0);
  assert.ok(
    changes.every((c: { actor: string }) => c.actor === 'pmacontrol:push-job' || c.actor === 'system'),
    JSON.stringify(changes.map((c: { actor: string }) => c.actor)),
  );
  for (const [user, password] of [
    ['push-job', 'wrong'],
    ['retired', 'Old-Pa55'],
    ['nobody', 'Job-Pa55'],
  ]) {
    const refused = await send(service.url, 'POST', PUSH, { body, headers: basic(user!, password!) });
    assert.is(refused.status, 401, `${user}: ${refused.text}`);
  }
  const elsewhere = await send(service.url, 'GET', `${BASE}/servers`, { headers: basic('push-job', 'Job-Pa55') });
  assert.is(elsewhere.status, 401, 'only the push takes them');
  assert.not.match(service.output(), 'Job-Pa55');
}

if (!url) skipWithoutMariadb("PmaControl's webservice users");
else {
  it("Basic credentials of PmaControl's enabled webservice users are taken on the push, as PmaControl takes them", async () => {
    const db = await freshDatabase(url);
    await withSchema(db.url);
    const cryptConfig = writeCryptConfig(tempDir());
    const crypt = createPmaControlCrypt(readPmaControlCryptKey(cryptConfig));
    const connection = await createConnection({ uri: db.url });
    await connection.query('INSERT INTO webservice_user (user, host, password, is_enabled) VALUES ?', [
      [
        ['push-job', '%', crypt.encrypt('Job-Pa55'), 1],
        ['retired', '%', crypt.encrypt('Old-Pa55'), 0],
      ],
    ]);
    await connection.end();
    const env = {
      DATA_DIR: tempDir(),
      ANONYMOUS_ROLE: 'reader',
      PMACONTROL_DB_URL: db.url,
      PMACONTROL_CRYPT_KEY_FILE: cryptConfig,
    };
    const service = await spawnService(env);
    try {
      await assertWebserviceUsers(service);
    } finally {
      await service.stop();
      await db.drop();
    }
  });
}

it.run();
