import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyFingerprint } from '../../src/application/secret-key.js';
import { createSecretBox } from '../../src/application/secrets.js';
import { BASE, startHarness } from '../support/harness.js';

const it = suite('a key rotation in the change log, the feed and the history, as the OpenAPI document says');

it('SecretsResealed: listed with its entry and no diff, values redacted; the history and version do not move', async () => {
  const h = await startHarness();
  try {
    const body = { id_client: 99, id_environment: 1, name: 'db1', ip: '10.0.0.1', login: 'pma', passwd: 'pw' };
    const id = (await h.request('POST', `${BASE}/servers`, { body })).body.id;
    const next = randomBytes(32);
    const done = await h.service.write.rotateKey(createSecretBox(next), keyFingerprint(next), {
      actor: 'ops',
      requestId: 'rotation-1',
    });
    assert.equal(done, { entries: 1, secrets: 1 });
    const changes = await h.request('GET', '/fr/api/changes?type=SecretsResealed');
    assert.is(changes.status, 200);
    const [change] = changes.body.items;
    assert.equal(
      [change.resource, change.id, change.actor, change.data.values.passwd],
      ['servers', id, 'ops', '[redacted]'],
    );
    for (const query of [`resource=servers&id=${id}`, 'resource=servers']) {
      const found = await h.request('GET', `/fr/api/changes?${query}`);
      assert.equal(
        found.body.items.map((c: { type: string }) => c.type),
        ['ServerCreated', 'SecretsResealed'],
        query,
      );
    }
    const csv = await h.request('GET', '/fr/api/changes?type=SecretsResealed', { headers: { Accept: 'text/csv' } });
    assert.is(csv.status, 200);
    const history = await h.request('GET', `${BASE}/servers/${id}/history`);
    assert.equal(
      history.body.items.map((i: { type: string }) => i.type),
      ['ServerCreated'],
    );
    assert.is((await h.request('GET', `${BASE}/servers/${id}`)).body.item.version, 1);
    const refused = await h.request('PATCH', `${BASE}/servers/${id}`, { body: { port: 3307 } });
    assert.equal([refused.status, refused.body.code], [503, 'unavailable'], 'this instance still holds the old key');
    assert.is((await h.request('GET', '/readyz')).status, 503);
  } finally {
    await h.close();
  }
});

it.run();
