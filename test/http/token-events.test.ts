import { EventSource } from 'eventsource';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, type Harness, startHarness } from '../support/harness.js';

const it = suite('token events are for admins: every route leaves them out for others');
const SETUP = { actor: 'setup', requestId: 'setup' };

/** A reader asking for the tokens' history is refused; an admin gets it, and every token event. */
async function assertAdminsOnly(h: Harness, asAdmin: Record<string, string>): Promise<void> {
  const refused = await h.request('GET', '/fr/api/changes?resource=tokens');
  assert.equal([refused.status, refused.body.code], [403, 'forbidden']);
  const byAdmin = await h.request('GET', '/fr/api/changes?resource=tokens', { headers: asAdmin });
  assert.equal(
    byAdmin.body.items.map((c: { type: string }) => c.type),
    ['TokenIssued', 'TokenIssued', 'TokenRevoked'],
  );
  const allForAdmin = await h.request('GET', '/fr/api/changes?limit=1000', { headers: asAdmin });
  assert.ok(allForAdmin.body.items.some((c: { type: string }) => c.type === 'TokenRevoked'));
}

it('changes (JSON, NDJSON, CSV), the feed: no token event for a reader; ?resource=tokens is a 403; admins see them', async () => {
  const h = await startHarness({ access: { anonymousRole: 'reader', corsOrigins: [] }, keepAliveMs: 100 });
  try {
    const admin = await h.service.write.issueToken(
      { name: 'root', role: 'admin', secrets: false, expiresAt: null },
      SETUP,
    );
    const asAdmin = { Authorization: `Bearer ${admin.token}` };
    const feed: string[] = [];
    const source = new EventSource(`${h.url}/fr/api/changes/stream?after=0`);
    source.addEventListener('change', (event) => feed.push(JSON.parse(event.data).type));
    const made = await h.request('POST', '/fr/api/tokens', {
      body: { name: 'ansible', role: 'writer' },
      headers: asAdmin,
    });
    await h.request('DELETE', `/fr/api/tokens/${made.body.item.id}`, { headers: asAdmin });
    await h.request('POST', `${BASE}/tags`, {
      body: { name: 'after-tokens', color: '#000000', background: '#FFFFFF' },
      headers: asAdmin,
    });
    for (let i = 0; i < 200 && !feed.includes('TagCreated'); i++) await new Promise((r) => setTimeout(r, 10));
    source.close();
    assert.ok(feed.includes('TagCreated'));
    assert.not.ok(
      feed.some((type) => type.startsWith('Token')),
      `the feed: ${feed}`,
    );

    const json = await h.request('GET', '/fr/api/changes?limit=1000');
    const ndjson = await h.request('GET', '/fr/api/changes', { headers: { Accept: 'application/x-ndjson' } });
    const csv = await h.request('GET', '/fr/api/changes', { headers: { Accept: 'text/csv' } });
    assert.ok(json.body.items.length > 0);
    for (const [what, text] of [
      ['json', json.text],
      ['ndjson', ndjson.text],
      ['csv', csv.text],
    ]) {
      assert.not.ok(/Token(Issued|Revoked)|ansible/.test(text), `${what} shows a token event`);
    }
    await assertAdminsOnly(h, asAdmin);
  } finally {
    await h.close();
  }
});

it.run();
