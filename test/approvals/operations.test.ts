import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { Receiver } from '../support/receiver.js';
import { act, issueTokens, policy, prodServer, type Tokens } from './support.js';

/**
 * The other operations a policy holds (section 16) — a token's issue, an import — and what event
 * rules are told: the approvals' events, and each use of break glass.
 */

let service: ServiceProcess;
let url: string;
let tokens: Tokens;
const receiver = new Receiver();

test.before(async () => {
  await receiver.start();
  const dataDir = tempDir();
  service = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '50', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
  url = service.url;
  tokens = await issueTokens([service], { DATA_DIR: dataDir });
});

test.after(async () => {
  await service.stop();
  await receiver.close();
});

/** Approved by bob, then executed by its requester. */
async function approvedAndRun(approval: number, requester: string) {
  assert.is((await act(url, tokens, 'bob', approval, 'approve')).body.approval.state, 'approved');
  const run = await act(url, tokens, requester, approval, 'execute');
  assert.is(run.status, 200, run.text);
  return run.body;
}

test('a token issue is held; executed, the token is answered once and works', async () => {
  const rules = { operations: ['token-issue'], resources: ['tokens'], approvals: 1, approvers: { tokens: ['bob'] } };
  const id = await policy(url, tokens, { name: 'new-tokens', ...rules });
  const asked = await send(url, 'POST', '/fr/api/tokens', {
    headers: tokens.root,
    body: { name: 'ci', role: 'reader' },
  });
  assert.is(asked.status, 202, asked.text);
  assert.not.ok(/pmc_/.test(asked.text), 'no token before the approval');
  assert.equal(
    asked.body.approval.changes[0].diff.find((m: { field: string }) => m.field === 'name'),
    {
      field: 'name',
      before: null,
      after: 'ci',
    },
  );
  const done = await approvedAndRun(asked.body.approval.id, 'root');
  assert.match(done.token, /^pmc_/);
  const whoami = await send(url, 'GET', '/fr/api/whoami', { headers: { Authorization: `Bearer ${done.token}` } });
  assert.equal([whoami.status, whoami.body.actor], [200, 'ci']);
  await send(url, 'PATCH', `/fr/api/policies/${id}`, { headers: tokens.root, body: { enabled: false } });
});

test('an import is held as one approval; executed, it applies all of it once', async () => {
  await policy(url, tokens, { name: 'imports', operations: ['import'], approvals: 1, approvers: { roles: ['admin'] } });
  await send(url, 'POST', `${BASE}/tags`, { body: { name: 'imp', color: '#000000', background: '#FFFFFF' } });
  const exported = await send(url, 'GET', '/fr/api/export', { headers: tokens.root });
  const document = exported.body;
  document.resources.tags = document.resources.tags.map((tag: Record<string, unknown>) =>
    tag.name === 'imp' ? { ...tag, color: '#123456' } : tag,
  );
  const asked = await send(url, 'POST', '/fr/api/import', { headers: tokens.root, body: document });
  assert.is(asked.status, 202, asked.text);
  assert.is(asked.body.approval.target, null);
  const dry = await send(url, 'POST', '/fr/api/import?dry_run=true', { headers: tokens.root, body: document });
  assert.is(dry.status, 200, 'a dry run writes nothing: never held');
  const done = await approvedAndRun(asked.body.approval.id, 'root');
  assert.is(done.import.updated, 1);
  const tags = await send(url, 'GET', `${BASE}/tags?name=imp`);
  assert.is(tags.body.items[0].color, '#123456');
});

test("a policy naming change-set-merge makes a change set's merge an approval", async () => {
  await policy(url, tokens, {
    name: 'merges',
    operations: ['change-set-merge'],
    approvals: 1,
    approvers: { tokens: ['bob'] },
  });
  const opened = await send(url, 'POST', '/fr/api/change-sets', { headers: tokens.alice, body: { name: 'retag' } });
  const id = opened.body.change_set.id;
  const tag = { name: 'from-a-change-set', color: '#000000', background: '#FFFFFF' };
  const staged = await send(url, 'POST', `${BASE}/tags`, {
    headers: { ...tokens.alice, 'Change-Set': String(id) },
    body: tag,
  });
  assert.is(staged.status, 202, staged.text);
  const held = await send(url, 'POST', `/fr/api/change-sets/${id}/merge`, { headers: tokens.alice });
  assert.equal([held.status, held.body.approval?.operation], [202, 'change-set-merge'], held.text);
  assert.equal(held.body.approval.changes[0].diff.find((m: { field: string }) => m.field === 'name').after, tag.name);
  assert.is((await send(url, 'GET', `${BASE}/tags?name=${tag.name}`)).body.items.length, 0, 'nothing merged yet');
  const done = await approvedAndRun(held.body.approval.id, 'alice');
  assert.is(done.change_set.state, 'merged');
  assert.is((await send(url, 'GET', `${BASE}/tags?name=${tag.name}`)).body.items.length, 1);
});

test('event rules are told of approvals and of break glass', async () => {
  const rule = (name: string, on: string[], types: string[]) =>
    send(url, 'POST', '/fr/api/event-rules', {
      headers: tokens.root,
      body: { name, on, types, target: { url: receiver.url } },
    });
  assert.is((await rule('approvers', ['approvals'], ['ApprovalRequested'])).status, 201);
  assert.is((await rule('glass', ['servers'], ['BreakGlassUsed'])).status, 201);
  await policy(url, tokens, {
    name: 'prod-updates',
    operations: ['update'],
    resources: ['servers'],
    approvers: { roles: ['admin'] },
  });
  const id = await prodServer(url, 20, 'pw');
  const held = await send(url, 'PATCH', `${BASE}/servers/${id}`, { headers: tokens.alice, body: { port: 3400 } });
  const glass = { ...tokens.glass, 'X-Break-Glass-Reason': 'INC-9 failover' };
  assert.is((await send(url, 'PATCH', `${BASE}/servers/${id}`, { headers: glass, body: { port: 3401 } })).status, 200);
  await receiver.until((got) => got.length >= 2);
  const types = receiver.received.map((one) => JSON.parse(one.body).change.type).sort();
  assert.equal(types, ['ApprovalRequested', 'BreakGlassUsed']);
  const requested = receiver.received
    .map((one) => JSON.parse(one.body).change)
    .find((c) => c.type === 'ApprovalRequested');
  assert.equal([requested.id, requested.data.request], [held.body.approval.id, '[redacted]']);
});

test.run();
