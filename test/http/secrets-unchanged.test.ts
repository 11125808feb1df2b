import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';
import { tempDir } from '../support/process.js';

/**
 * A secret comes back byte for byte as it was sent, and an unchanged secret is never a change: a
 * revert, a PUT, a PATCH or an import that leaves a password as it is records no difference of it,
 * and the differences between two moments list no server whose password holds the same value.
 */
const it = suite<{ h: Harness; admin: string }>('secrets: kept as sent, and never a change when unchanged');

it.before.each(async (context) => {
  context.h = await startHarness();
  const issued = await context.h.service.write.issueToken(
    { name: 'platform', role: 'admin', secrets: true, expiresAt: null },
    { actor: 'setup', requestId: 'setup' },
  );
  context.admin = issued.token;
});
it.after.each(async ({ h }) => h.close());

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

it('a real ssh-keygen key, its last newline included, comes back byte for byte and ssh-keygen -y accepts it', async ({
  h,
  admin,
}) => {
  const dir = tempDir();
  const file = join(dir, 'id');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'backup@pmacontrol', '-f', file]);
  const privateKey = readFileSync(file, 'utf8');
  assert.ok(privateKey.endsWith('\n'));
  const made = await h.request('POST', `${BASE}/ssh-keys`, {
    body: { name: 'k', user: 'root', public_key: readFileSync(`${file}.pub`, 'utf8'), private_key: privateKey },
  });
  assert.is(made.status, 201, JSON.stringify(made.body));
  const revealed = await h.request('GET', `${BASE}/ssh-keys/${made.body.id}/secret`, { headers: auth(admin) });
  assert.is(revealed.body.private_key, privateKey, 'byte for byte');
  const back = join(dir, 'revealed');
  writeFileSync(back, revealed.body.private_key, { mode: 0o600 });
  const publicKey = execFileSync('ssh-keygen', ['-y', '-f', back], { encoding: 'utf8' });
  assert.is(publicKey.split(' ')[1], readFileSync(`${file}.pub`, 'utf8').split(' ')[1]);
  const spaced = await h.request('POST', `${BASE}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 'db', ip: '10.0.0.9', login: 'm', passwd: '  two spaces \n' },
  });
  const password = await h.request('GET', `${BASE}/servers/${spaced.body.id}/secret`, { headers: auth(admin) });
  assert.is(password.body.passwd, '  two spaces \n');
});

it('a revert that leaves the password as it is records no password change; /diff lists no such server', async ({
  h,
}) => {
  const made = await h.request('POST', `${BASE}/servers`, {
    body: { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'm', passwd: 'same' },
  });
  const id = made.body.id;
  const before = (await h.request('GET', '/readyz')).body.position;
  await h.request('PATCH', `${BASE}/servers/${id}`, { body: { port: 3307 } });
  const reverted = await h.request('POST', `${BASE}/servers/${id}/revert`, { body: { version: 1 } });
  assert.is(reverted.status, 200);
  const history = (await h.request('GET', `${BASE}/servers/${id}/history`)).body.items;
  const revert = history.at(-1);
  assert.equal(
    revert.diff.map((member: { field: string }) => member.field),
    ['port'],
    'the port came back; the password did not move',
  );
  const diff = (await h.request('GET', `/fr/api/diff?from=${before}`)).body;
  assert.equal(diff.resources.servers.updated, [], 'the server is as it was: not updated');
  const again = await h.request('POST', `${BASE}/servers/${id}/revert`, { body: { version: 1 } });
  assert.is(again.body.item.version, reverted.body.item.version, 'a second revert to it changes nothing');
});

it('PUT, PATCH and an import that send the stored password again record nothing', async ({ h, admin }) => {
  const body = { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'm', passwd: 'same' };
  const made = await h.request('POST', `${BASE}/servers`, { body });
  const id = made.body.id;
  const position = (await h.request('GET', '/readyz')).body.position;
  const patched = await h.request('PATCH', `${BASE}/servers/${id}`, { body: { passwd: 'same' } });
  assert.equal([patched.body.changed, patched.body.item.version], [false, 1]);
  const put = await h.request('PUT', `${BASE}/servers/${id}`, { body });
  assert.equal([put.body.changed, put.body.item.version], [false, 1]);
  const exported = await h.request('GET', '/fr/api/export?secrets=sealed', { headers: auth(admin) });
  const sealed = await h.request('POST', '/fr/api/import', { body: exported.body, headers: auth(admin) });
  assert.equal([sealed.status, sealed.body.updated], [200, 0], JSON.stringify(sealed.body));
  const document = { format: 'pmacontrol-config/1', resources: { servers: [{ ...body, id }] } };
  const plain = await h.request('POST', '/fr/api/import', { body: document, headers: auth(admin) });
  assert.equal([plain.status, plain.body.unchanged, plain.body.updated], [200, 1, 0]);
  assert.is((await h.request('GET', '/readyz')).body.position, position, 'no event recorded');
});

it.run();
