import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, startHarness } from '../support/harness.js';
import { makeKey } from '../support/keys.js';

const it = suite('secret reads: for tokens with the right, recorded before they are answered');
const SETUP = { actor: 'setup', requestId: 'setup' };

it('a secrets token reads a password and a private key; each read is a SecretRevealed change, never the value', async () => {
  const h = await startHarness({ access: { anonymousRole: 'writer', corsOrigins: [] } });
  try {
    const { token } = await h.service.write.issueToken(
      { name: 'platform', role: 'reader', secrets: true, expiresAt: null },
      SETUP,
    );
    const auth = { Authorization: `Bearer ${token}` };
    const server = await h.request('POST', `${BASE}/servers`, {
      body: { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd: 'S3cr3t-pw' },
    });
    const key = makeKey('ed25519');
    const sshKey = await h.request('POST', `${BASE}/ssh-keys`, {
      body: { name: 'k', user: 'u', public_key: key.publicKey, private_key: key.privateKey },
    });

    const password = await h.request('GET', `${BASE}/servers/${server.body.id}/secret`, {
      headers: { ...auth, 'X-Request-ID': 'read-1' },
    });
    assert.equal([password.status, password.body], [200, { passwd: 'S3cr3t-pw' }]);
    assert.is(password.headers.get('cache-control'), 'no-store');
    const privateKey = await h.request('GET', `${BASE}/ssh-keys/${sshKey.body.id}/secret`, { headers: auth });
    assert.equal([privateKey.status, privateKey.body.private_key.trim()], [200, key.privateKey.trim()]);

    const changes = await h.request('GET', `/fr/api/changes?type=SecretRevealed&resource=servers&id=${server.body.id}`);
    assert.equal(
      changes.body.items.map((c: Record<string, unknown>) => [c.type, c.resource, c.id, c.actor, c.request_id]),
      [['SecretRevealed', 'servers', server.body.id, 'platform', 'read-1']],
    );
    // Found by resource, with or without the id, beside the changes that made versions of the entry.
    for (const query of [`resource=servers&id=${server.body.id}`, 'resource=servers', 'resource=servers&order=desc']) {
      const found = await h.request('GET', `/fr/api/changes?${query}`);
      const types = found.body.items.map((c: { type: string }) => c.type);
      assert.equal(query.endsWith('desc') ? types.reverse() : types, ['ServerCreated', 'SecretRevealed'], query);
    }
    const all = JSON.stringify((await h.store.readAll()).map((e) => [e.data, e.metadata]));
    const changeLog = (await h.request('GET', '/fr/api/changes?limit=1000')).text;
    for (const text of [all, changeLog]) {
      assert.not.ok(text.includes('S3cr3t-pw'), 'the password is in the log or the change log');
      assert.not.ok(text.includes('PRIVATE KEY'), 'the private key is in the log or the change log');
    }

    const missing = await h.request('GET', `${BASE}/servers/999/secret`, { headers: auth });
    assert.equal([missing.status, missing.body.code], [404, 'not_found']);
    const anonymous = await h.request('GET', `${BASE}/servers/${server.body.id}/secret`);
    assert.equal([anonymous.status, anonymous.body.code], [403, 'forbidden']);
    const reveals = (await h.store.readAll()).filter((e) => e.type === 'SecretRevealed');
    assert.is(reveals.length, 2, 'a refused or failed read records nothing');
  } finally {
    await h.close();
  }
});

it('only a caller that holds the secrets right may grant it: an admin without it gets 403', async () => {
  const h = await startHarness({ access: { anonymousRole: 'none', corsOrigins: [] } });
  try {
    const admin = (secrets: boolean) =>
      h.service.write.issueToken({ name: `admin-${secrets}`, role: 'admin', secrets, expiresAt: null }, SETUP);
    const plain = { Authorization: `Bearer ${(await admin(false)).token}` };
    const holder = { Authorization: `Bearer ${(await admin(true)).token}` };
    const body = { name: 'reads-all', role: 'reader', secrets: true };
    const refused = await h.request('POST', '/fr/api/tokens', { body, headers: plain });
    assert.equal([refused.status, refused.body.code], [403, 'forbidden']);
    const without = await h.request('POST', '/fr/api/tokens', { body: { ...body, secrets: false }, headers: plain });
    assert.is(without.status, 201, 'a token without the right, it may issue');
    const granted = await h.request('POST', '/fr/api/tokens', { body: { ...body, name: 'r2' }, headers: holder });
    assert.equal([granted.status, granted.body.item.secrets], [201, true]);
    const minted = h.service.state.collections.tokens.inOrder().filter((t) => t.secrets && t.name === 'reads-all');
    assert.equal(minted, [], 'the refused request issued nothing');
  } finally {
    await h.close();
  }
});

it.run();
