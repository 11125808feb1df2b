import { createHash, randomBytes } from 'node:crypto';
import sshpk from 'sshpk';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { fabricatedRsa, makeKey } from '../support/keys.js';

const it = suite<{ h: Harness }>('ssh-keys');
it.before.each(async (ctx) => {
  ctx.h = await startHarness();
});
it.after.each(async ({ h }) => h.close());

const ed = makeKey('ed25519', 0, 'dba@paris');
const rsa = makeKey('rsa', 2048, 'rsa@paris');
const other = makeKey('ed25519');

it('type, bit and SHA256 fingerprint are derived; comment defaults to the key comment; the private key is never returned', async ({
  h,
}) => {
  const made = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'backup', user: 'root', public_key: ed.publicKey, private_key: ed.privateKey },
  });
  assert.is(made.status, 201, made.text);
  const item = made.body.item;
  assert.equal(
    [item.type, item.bit, item.fingerprint, item.comment, item.has_private_key],
    ['ED25519', 256, ed.fingerprint, 'dba@paris', true],
  );
  assert.is(item.added_on, item.created_at);
  assert.not.ok('private_key' in item);
  assert.not.ok(made.text.includes('PRIVATE KEY'));
});

it('RSA keys: PEM private keys accepted, bit is the modulus size; below 2048 refused', async ({ h }) => {
  const made = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'rsa', user: 'root', public_key: rsa.publicKey, private_key: rsa.privatePem },
  });
  assert.equal([made.status, made.body.item.type, made.body.item.bit], [201, 'RSA', 2048]);
  const weak = makeKey('rsa', 1024);
  const refused = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'weak', user: 'root', public_key: weak.publicKey, private_key: weak.privateKey },
  });
  assert.equal([refused.status, refused.body.errors[0].code], [422, 'key_too_weak']);
});

it('refused: a private key of another pair, an encrypted one, garbage, other key types, several lines', async ({
  h,
}) => {
  const post = (fields: Record<string, string>) =>
    h.request('POST', `${BASE}/ssh-keys`, {
      body: { name: 'k', user: 'u', public_key: ed.publicKey, private_key: ed.privateKey, ...fields },
    });
  assert.is((await post({ private_key: other.privateKey })).body.errors[0].code, 'key_mismatch');
  assert.is((await post({ private_key: 'not a key' })).body.errors[0].field, 'private_key');
  assert.is((await post({ public_key: 'ssh-ed25519 AAAAgarbage' })).body.errors[0].code, 'invalid_format');
  assert.is((await post({ public_key: `${ed.publicKey}\n${rsa.publicKey}` })).body.errors[0].field, 'public_key');
  const ecdsa =
    'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=';
  assert.is((await post({ public_key: ecdsa })).body.errors[0].code, 'unsupported_key_type');
  const encrypted = [
    '-----BEGIN OPENSSH PRIVATE KEY-----',
    'b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABBa4JZ1UX',
    '-----END OPENSSH PRIVATE KEY-----',
  ].join('\n');
  assert.is((await post({ private_key: encrypted })).status, 422);
});

it('refused: an RSA pair made up around a public key (4,096 and 16,384 bits), an ED25519 seed not of its key', async ({
  h,
}) => {
  for (const bits of [4096, 16384]) {
    const made = fabricatedRsa(bits);
    const reply = await h.request('POST', `${BASE}/ssh-keys`, {
      body: { name: `fake-${bits}`, user: 'u', public_key: made.publicKey, private_key: made.privateKey },
    });
    assert.equal([reply.status, reply.body.errors?.[0]?.code], [422, 'key_mismatch'], reply.text);
  }
  const key = sshpk.parsePrivateKey(ed.privateKey, 'openssh');
  const seed = (key.part as unknown as Record<string, { data: Buffer }>).k;
  seed.data = Buffer.concat([randomBytes(32), seed.data.subarray(32)]);
  const forged = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'forged', user: 'u', public_key: ed.publicKey, private_key: key.toString('openssh').toString() },
  });
  assert.equal([forged.status, forged.body.errors?.[0]?.code], [422, 'key_mismatch'], forged.text);
});

it('an import with a made-up pair is refused, the entry named', async ({ h }) => {
  const { token } = await h.service.write.issueToken(
    { name: 'importer', role: 'admin', secrets: false, expiresAt: null },
    { actor: 'setup', requestId: 's' },
  );
  const made = fabricatedRsa(4096);
  const document = {
    format: 'pmacontrol-config/1',
    resources: {
      'ssh-keys': [{ id: 40, name: 'fake', user: 'u', public_key: made.publicKey, private_key: made.privateKey }],
    },
  };
  const reply = await h.request('POST', '/fr/api/import', {
    body: document,
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.is(reply.status, 422, reply.text);
  assert.equal(reply.body.errors, [
    { field: 'resources.ssh-keys[0].private_key', code: 'key_mismatch', message: 'does not match public_key' },
  ]);
});

it('sent type, bit, fingerprint must match the key; the legacy 40-hex fingerprint is accepted', async ({ h }) => {
  const base = { name: 'k', user: 'u', public_key: ed.publicKey, private_key: ed.privateKey };
  assert.is(
    (await h.request('POST', `${BASE}/ssh-keys`, { body: { ...base, type: 'RSA' } })).body.errors[0].field,
    'type',
  );
  assert.is(
    (await h.request('POST', `${BASE}/ssh-keys`, { body: { ...base, bit: 4096 } })).body.errors[0].field,
    'bit',
  );
  assert.is(
    (await h.request('POST', `${BASE}/ssh-keys`, { body: { ...base, fingerprint: other.fingerprint } })).body.errors[0]
      .field,
    'fingerprint',
  );
  const legacy = createHash('sha1').update(ed.publicKey.slice(8)).digest('hex').toUpperCase();
  const made = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { ...base, fingerprint: legacy, type: 'ED25519', bit: 256 },
  });
  assert.is(made.status, 201, made.text);
  assert.is(made.body.item.fingerprint, ed.fingerprint);
});

it('(fingerprint, user) is unique; aliases pub and privée; a GET body can be PUT back without the private key', async ({
  h,
}) => {
  const made = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'a', user: 'root', pub: ed.publicKey, privée: ed.privateKey },
  });
  assert.is(made.status, 201, made.text);
  const dup = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'b', user: 'root', public_key: ed.publicKey, private_key: ed.privateKey },
  });
  assert.equal([dup.status, dup.body.code], [409, 'conflict']);
  const otherUser = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'b', user: 'backup', public_key: ed.publicKey, private_key: ed.privateKey },
  });
  assert.is(otherUser.status, 201);
  const read = await h.request('GET', `${BASE}/ssh-keys/${made.body.id}`);
  const put = await h.request('PUT', `${BASE}/ssh-keys/${made.body.id}`, { body: read.body.item });
  assert.equal([put.status, put.body.changed, put.body.item.version], [200, false, 1]);
  const newPublic = await h.request('PATCH', `${BASE}/ssh-keys/${made.body.id}`, {
    body: { public_key: rsa.publicKey },
  });
  assert.is(newPublic.body.errors[0].code, 'key_mismatch');
  const rotated = await h.request('PATCH', `${BASE}/ssh-keys/${made.body.id}`, {
    body: { public_key: rsa.publicKey, private_key: rsa.privateKey },
  });
  assert.equal([rotated.body.item.type, rotated.body.item.bit, rotated.body.item.version], ['RSA', 2048, 2]);
});

it('storage-areas: géolocalisation and ssh_key aliases', async ({ h }) => {
  const key = (
    await h.request('POST', `${BASE}/ssh-keys`, {
      body: { name: 'a', user: 'root', public_key: ed.publicKey, private_key: ed.privateKey },
    })
  ).body.id;
  const made = await h.request('POST', `${BASE}/storage-areas`, {
    body: {
      ssh_key: key,
      ip: '2001:db8::1',
      port: 2222,
      path: '/backup',
      libelle: 'Lyon',
      géolocalisation: { city: 12, country: 3 },
    },
  });
  assert.is(made.status, 201, made.text);
  assert.equal(
    [made.body.item.id_ssh_key, made.body.item.id_geolocalisation_city, made.body.item.id_geolocalisation_country],
    [key, 12, 3],
  );
  const cleared = await h.request('PATCH', `${BASE}/storage-areas/${made.body.id}`, {
    body: { id_geolocalisation_city: null },
  });
  assert.is(cleared.body.item.id_geolocalisation_city, null);
  const notNullable = await h.request('PATCH', `${BASE}/storage-areas/${made.body.id}`, { body: { libelle: null } });
  assert.equal([notNullable.status, notNullable.body.errors[0].field], [422, 'libelle']);
  const relative = await h.request('PATCH', `${BASE}/storage-areas/${made.body.id}`, { body: { path: 'backup' } });
  assert.is(relative.body.errors[0].field, 'path');
});

it('secrets never appear in responses, history, logs or the event log', async ({ h }) => {
  const password = 'Pa55-w0rd-that-must-not-leak';
  const server = await h.request('POST', `${BASE}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 's', ip: '10.0.0.1', login: 'l', passwd: password },
  });
  await h.request('PATCH', `${BASE}/servers/${server.body.id}`, { body: { passwd: `${password}-2` } });
  const key = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'a', user: 'root', public_key: ed.publicKey, private_key: ed.privateKey },
  });
  const history = await h.request('GET', `${BASE}/servers/${server.body.id}/history`);
  assert.is(history.body.items[0].data.passwd, '[redacted]');
  assert.is(history.body.items[1].data.changes.passwd, '[redacted]');
  const keyHistory = await h.request('GET', `${BASE}/ssh-keys/${key.body.id}/history`);
  assert.is(keyHistory.body.items[0].data.private_key, '[redacted]');
  const everything = [
    history.text,
    keyHistory.text,
    (await h.request('GET', `${BASE}/servers`)).text,
    (await h.request('GET', `${BASE}/ssh-keys`)).text,
    JSON.stringify(await h.store.readAll()),
    h.logs.join('\n'),
  ].join('\n');
  assert.not.ok(everything.includes(password));
  const keyBody = ed.privateKey.split('\n')[1];
  assert.not.ok(everything.includes(keyBody));
  assert.ok(JSON.stringify(await h.store.readAll()).includes('"passwd":"v1:'));
});

/** A log from before key fingerprints were recorded, whose secrets were sealed under two keys (the old silent key replacement). */
async function legacyLog(keyA: Buffer, keyB: Buffer) {
  const { InMemoryEventStore } = await import('../../src/event-store/in-memory/store.js');
  const serverBody = (id: number, passwd: string) => ({
    body: { id, id_client: 99, id_environment: 1, name: `s${id}`, ip: `10.0.0.${id}`, login: 'l', passwd },
  });
  const underB = await startHarness({ secretKey: keyB });
  await underB.request('POST', `${BASE}/servers`, serverBody(1, 'first'));
  const underA = await startHarness({ secretKey: keyA });
  await underA.request('POST', `${BASE}/servers`, serverBody(2, 'old'));
  await underA.request('POST', `${BASE}/ssh-keys`, {
    body: { id: 1, name: 'a', user: 'root', public_key: ed.publicKey, private_key: ed.privateKey },
  });
  const legacy = new InMemoryEventStore();
  const genesis = (await underA.store.readAll()).filter((e) => e.position <= 7 && e.type !== 'SecretKeyRecorded');
  const later = [...(await underB.store.readAll()), ...(await underA.store.readAll())].filter((e) => e.position > 8);
  const events = [...genesis, ...later].map(({ type, data, metadata }) => ({ type, data, metadata }));
  await legacy.append('pmacontrol-config', events, 'no_stream');
  await underA.close();
  await underB.close();
  return legacy;
}

it('a log from before fingerprints, with secrets under two keys: never a 500, the key is recorded', async () => {
  const { randomBytes } = await import('node:crypto');
  const [keyA, keyB] = [randomBytes(32), randomBytes(32)];
  const store = await legacyLog(keyA, keyB);
  const second = await startHarness({ store, secretKey: keyB });
  try {
    const recorded = (await store.readAll()).filter((e) => e.type === 'SecretKeyRecorded');
    assert.is(recorded.length, 1, 'the key is recorded on the first start');
    const rotated = await second.request('PATCH', `${BASE}/servers/2`, { body: { passwd: 'old' } });
    assert.equal([rotated.status, rotated.body.changed], [200, true]);
    const rename = await second.request('PATCH', `${BASE}/ssh-keys/1`, { body: { public_key: rsa.publicKey } });
    assert.equal([rename.status, rename.body.errors[0].field], [422, 'private_key']);
    const resent = await second.request('PATCH', `${BASE}/ssh-keys/1`, { body: { private_key: ed.privateKey } });
    assert.equal([resent.status, resent.body.changed], [200, true]);
  } finally {
    await second.close();
  }
  const { StartRefused } = await import('../../src/application/start-refused.js');
  const fresh = await legacyLog(keyA, keyB);
  try {
    await startHarness({ store: fresh, secretKey: keyA });
    assert.unreachable('a key that cannot open the first secret of a legacy log is refused');
  } catch (error) {
    assert.instance(error, StartRefused);
  }
});

it.run();
