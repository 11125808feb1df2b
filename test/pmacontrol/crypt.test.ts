import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPmaControlCrypt, PmaControlCryptError, readPmaControlCryptKey } from '../../src/pmacontrol/crypt.js';
import { BASE, startHarness } from '../support/harness.js';
import { makeKey } from '../support/keys.js';
import { phpAvailable, pmacontrolDecrypt, pmacontrolEncrypt, writeCryptConfig } from '../support/php.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const it = suite("PmaControl's ciphertexts (is_password_crypted), made by PHP itself");
const php = phpAvailable();
const test = php ? it : it.skip;

test('the decoder opens what PHP made: OpenSSL padding and the old zero padding, any printable key', () => {
  const dir = tempDir();
  const config = writeCryptConfig(dir);
  const values = ['S3cr3t-pw', 'pässwörd with spaces', "quote ' and \\ backslash", 'x'.repeat(300)];
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(config));
  for (const zeroPadding of [false, true]) {
    const ciphertexts = pmacontrolEncrypt(config, values, zeroPadding);
    assert.equal(
      ciphertexts.map((c) => crypt.decrypt(c)),
      values,
    );
  }
  // The key alone in a file (one trailing line break) works as well as crypt.config.php.
  const phpKey = readPmaControlCryptKey(config);
  const bare = join(dir, 'key.txt');
  writeFileSync(bare, Buffer.concat([phpKey, Buffer.from('\n')]));
  assert.is(createPmaControlCrypt(readPmaControlCryptKey(bare)).decrypt(pmacontrolEncrypt(config, ['pw'])[0]!), 'pw');
});

test("what the service makes, PHP opens: the ciphertexts it writes into PmaControl's tables", () => {
  const config = writeCryptConfig(tempDir());
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(config));
  const values = ['S3cr3t-pw', 'pässwörd with spaces', "quote ' and \\ backslash", 'x'.repeat(300), ''];
  const made = values.map((value) => crypt.encrypt(value));
  assert.equal(pmacontrolDecrypt(config, made), values);
  assert.is.not(crypt.encrypt('same'), crypt.encrypt('same'), 'a random IV each time');
  assert.equal(
    made.map((c) => crypt.decrypt(c)),
    values,
  );
});

test('a wrong key, a damaged ciphertext or a value that is not a string does not open', () => {
  const dir = tempDir();
  const config = writeCryptConfig(dir);
  const [good, array] = pmacontrolEncrypt(config, ['pw', ['not', 'a', 'string']]);
  const other = createPmaControlCrypt(readPmaControlCryptKey(writeCryptConfig(tempDir())));
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(config));
  const damaged = `${good!.slice(0, 10)}${good![10] === 'A' ? 'B' : 'A'}${good!.slice(11)}`;
  for (const [open, text] of [
    [other, good],
    [crypt, damaged],
    [crypt, array],
    [crypt, 'plain password'],
    [crypt, ''],
  ] as const) {
    assert.throws(
      () => open.decrypt(text!),
      (e: Error) => e instanceof PmaControlCryptError,
      text,
    );
  }
});

test('without the key, a ciphertext is a 422 on the field; a bad one is a 422; nothing is recorded', async () => {
  const config = writeCryptConfig(tempDir());
  const [passwd] = pmacontrolEncrypt(config, ['S3cr3t-pw']);
  const body = { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd };
  const without = await startHarness();
  try {
    const refused = await without.request('POST', `${BASE}/servers`, { body: { ...body, is_password_crypted: 1 } });
    assert.equal(
      [refused.status, refused.body.errors],
      [422, [{ field: 'passwd', code: 'crypt_key_missing', message: refused.body.errors[0].message }]],
    );
  } finally {
    await without.close();
  }
  const crypt = createPmaControlCrypt(readPmaControlCryptKey(config));
  const h = await startHarness({ openCrypted: (text) => crypt.decrypt(text) });
  try {
    const before = (await h.store.readAll()).length;
    const bad = await h.request('POST', `${BASE}/servers`, {
      body: { ...body, passwd: 'not-a-ciphertext', is_password_crypted: true },
    });
    assert.equal([bad.status, bad.body.errors[0].field, bad.body.errors[0].code], [422, 'passwd', 'undecryptable']);
    assert.is((await h.store.readAll()).length, before);
    const plain = await h.request('POST', `${BASE}/servers`, { body: { ...body, is_password_crypted: 0 } });
    assert.is(plain.status, 201, 'is_password_crypted 0: passwd is the password itself');
  } finally {
    await h.close();
  }
});

test('the real service with PMACONTROL_CRYPT_KEY_FILE: ciphertexts are opened, sealed, and read back plain', async () => {
  const dataDir = tempDir();
  const config = writeCryptConfig(tempDir());
  const env = { DATA_DIR: dataDir, PMACONTROL_CRYPT_KEY_FILE: config };
  const service = await spawnService(env);
  try {
    const key = makeKey('ed25519');
    const [passwd, privateKey] = pmacontrolEncrypt(config, ['S3cr3t-pw', key.privateKey]);
    const post = (path: string, body: object) =>
      fetch(`${service.url}${BASE}/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const server = await post('servers', {
      ...{ id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd },
      is_password_crypted: 1,
    });
    const sshKey = await post('ssh-keys', {
      ...{ name: 'k', user: 'u', public_key: key.publicKey, private_key: privateKey },
      is_password_crypted: 1,
    });
    assert.equal([server.status, sshKey.status], [201, 201], JSON.stringify([server.body, sshKey.body]));
    const issued = await runCli(['token', 'create', '--name', 'platform', '--role', 'reader', '--secrets'], env);
    const token = issued.stdout.trim().split('\n').pop()!;
    const read = (path: string) =>
      fetch(`${service.url}${BASE}/${path}`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json());
    // The token was issued by another process: the service knows it once it has followed the log.
    for (let i = 0; i < 100; i++) {
      const whoami = await fetch(`${service.url}/fr/api/whoami`, { headers: { Authorization: `Bearer ${token}` } });
      if (whoami.status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await read(`servers/${server.body.id}/secret`), { passwd: 'S3cr3t-pw' });
    assert.is((await read(`ssh-keys/${sshKey.body.id}/secret`)).private_key.trim(), key.privateKey.trim());
    assert.not.ok(service.output().includes(passwd!), 'the ciphertext is in the logs');
  } finally {
    await service.stop();
  }
});

test('a key file that cannot be read stops the start with a message that names it', async () => {
  const missing = join(tempDir(), 'nowhere.php');
  const run = await runCli(['serve'], { DATA_DIR: tempDir(), PMACONTROL_CRYPT_KEY_FILE: missing, PORT: '0' }, 20_000);
  assert.is.not(run.code, 0);
  assert.match(run.stderr + run.stdout, `PMACONTROL_CRYPT_KEY_FILE ${missing} cannot be used`);
});

it.run();
