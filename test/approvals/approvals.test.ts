import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { type ServiceProcess, spawnService, tempDir } from '../support/process.js';
import { act, changesOf, issueTokens, policy, prodServer, type Tokens } from './support.js';

/**
 * Four eyes (section 16), through the real process: a production password under a two-approver
 * policy, a delete that goes stale, an expiry, a rejection, a policy change held by a policy, break
 * glass — each step in the change log with its actor.
 */

let service: ServiceProcess;
let url: string;
let tokens: Tokens;
const PASSWORD = 'pr0d-Secret 42!';

test.before(async () => {
  const dataDir = tempDir();
  service = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '50' });
  url = service.url;
  tokens = await issueTokens([service], { DATA_DIR: dataDir });
  await policy(url, tokens, {
    name: 'prod-needs-two',
    operations: ['delete', 'update', 'secret-read'],
    resources: ['servers'],
    where: [{ field: 'id_environment', in: [1] }],
    approvals: 2,
    approvers: { roles: ['admin'] },
  });
});

test.after(async () => {
  await service.stop();
});

test('a production password: held for one token, never by self-approval, read once after two other approvers', async () => {
  const id = await prodServer(url, 1, PASSWORD);
  const asked = await send(url, 'GET', `${BASE}/servers/${id}/secret`, { headers: tokens.alice });
  assert.is(asked.status, 202, asked.text);
  assert.not.ok(asked.text.includes(PASSWORD), 'the held answer holds no password');
  const approval = asked.body.approval;
  assert.is(asked.headers.get('location'), `/fr/api/approvals/${approval.id}`);
  assert.equal([approval.state, approval.operation, approval.requester], ['pending', 'secret-read', 'alice']);
  assert.equal(approval.target, { resource: 'servers', id, version: 1 });
  assert.is((await act(url, tokens, 'alice', approval.id, 'approve')).body.code, 'self_approval');
  assert.is((await act(url, tokens, 'alice', approval.id, 'execute')).status, 409, 'not approved yet');
  assert.is((await act(url, tokens, 'dave', approval.id, 'approve')).body.code, 'not_an_approver');
  const first = await act(url, tokens, 'bob', approval.id, 'approve', { reason: 'on call' });
  assert.is(first.body.approval.state, 'pending', 'one approval of two');
  assert.is((await act(url, tokens, 'bob', approval.id, 'approve')).body.code, 'already_voted');
  const second = await act(url, tokens, 'carol', approval.id, 'approve');
  assert.is(second.body.approval.state, 'approved');
  assert.is((await act(url, tokens, 'bob', approval.id, 'execute')).status, 403, 'only the requester executes');
  const read = await act(url, tokens, 'alice', approval.id, 'execute');
  assert.is(read.status, 200, read.text);
  assert.is(read.body.secrets.passwd, PASSWORD);
  assert.is(read.body.approval.state, 'executed');
  const again = await act(url, tokens, 'alice', approval.id, 'execute');
  assert.equal([again.status, again.body.code], [409, 'already_executed'], 'the value is answered once');
  const reveals = (await changesOf(url, tokens, 'SecretRevealed')).filter((item) => item.id === id);
  assert.equal(
    reveals.map((item) => item.actor),
    ['alice'],
    'one read, by the requester',
  );
  const votes = (await changesOf(url, tokens, 'ApprovalVoted')).filter((item) => item.id === approval.id);
  assert.equal(
    votes.map((item) => item.actor),
    ['bob', 'carol'],
  );
});

test('a delete whose target changed after the request is stale (412), and recorded so', async () => {
  const id = await prodServer(url, 2, PASSWORD);
  const asked = await send(url, 'DELETE', `${BASE}/servers/${id}`, { headers: tokens.alice });
  assert.is(asked.status, 202, asked.text);
  const approval = asked.body.approval;
  assert.equal(approval.changes[0].id, id);
  // Servers are soft-deleted: the change it would make is the flag.
  assert.equal(approval.changes[0].diff, [{ field: 'is_deleted', before: false, after: true }]);
  const glass = await send(url, 'PATCH', `${BASE}/servers/${id}`, {
    headers: { ...tokens.glass, 'X-Break-Glass-Reason': 'INC-4711 port move' },
    body: { port: 3307 },
  });
  assert.is(glass.status, 200, `break glass passes alone: ${glass.text}`);
  const used = (await changesOf(url, tokens, 'BreakGlassUsed')).filter((item) => item.id === id);
  assert.equal([used.length, used[0]?.actor, used[0]?.data.reason], [1, 'glass', 'INC-4711 port move']);
  const noReason = await send(url, 'PATCH', `${BASE}/servers/${id}`, { headers: tokens.glass, body: { port: 3308 } });
  assert.is(noReason.status, 202, 'without a reason, a break-glass token is held like any other');
  await act(url, tokens, 'bob', approval.id, 'approve');
  await act(url, tokens, 'carol', approval.id, 'approve');
  const run = await act(url, tokens, 'alice', approval.id, 'execute');
  assert.equal([run.status, run.body.code], [412, 'stale'], run.text);
  const now = await send(url, 'GET', `/fr/api/approvals/${approval.id}`, { headers: tokens.dave });
  assert.is(now.body.approval.state, 'stale');
  assert.is((await send(url, 'GET', `${BASE}/servers/${id}`)).status, 200, 'nothing deleted');
  assert.is((await changesOf(url, tokens, 'ApprovalStale')).filter((item) => item.id === approval.id).length, 1);
});

test('a rejection ends it; the requester may withdraw; the lists filter by state and approver', async () => {
  const id = await prodServer(url, 3, PASSWORD);
  const one = (await send(url, 'DELETE', `${BASE}/servers/${id}`, { headers: tokens.alice })).body.approval;
  const patch = { port: 3310, passwd: 'n3w-Secret-77' };
  const held = await send(url, 'PATCH', `${BASE}/servers/${id}`, { headers: tokens.alice, body: patch });
  const two = held.body.approval;
  assert.equal(two.changes[0].diff, [
    { field: 'port', before: 3306, after: 3310 },
    { field: 'passwd', before: '[redacted]', after: '[redacted]' },
  ]);
  const logged = await send(url, 'GET', '/fr/api/changes?type=ApprovalRequested&limit=1000', { headers: tokens.root });
  for (const text of [held.text, logged.text]) assert.not.ok(text.includes('n3w-Secret-77'), 'no password shown');
  const mine = await send(url, 'GET', '/fr/api/approvals?approver=me&state=pending', { headers: tokens.bob });
  const ids = mine.body.items.map((item: { id: number }) => item.id);
  assert.ok(ids.includes(one.id) && ids.includes(two.id), 'both wait for bob');
  const none = await send(url, 'GET', '/fr/api/approvals?approver=me', { headers: tokens.alice });
  assert.not.ok(
    none.body.items.some((item: { id: number }) => item.id === one.id),
    'never my own',
  );
  assert.is((await act(url, tokens, 'bob', one.id, 'reject')).status, 422, 'a rejection says why');
  const rejected = await act(url, tokens, 'bob', one.id, 'reject', { reason: 'still in use' });
  assert.equal([rejected.body.approval.state, rejected.body.approval.reason], ['rejected', 'still in use']);
  assert.is((await act(url, tokens, 'carol', one.id, 'approve')).body.code, 'not_open');
  assert.is((await act(url, tokens, 'bob', two.id, 'withdraw')).status, 403, 'only the requester withdraws');
  const withdrawn = await act(url, tokens, 'alice', two.id, 'withdraw', { reason: 'wrong port' });
  assert.is(withdrawn.body.approval.state, 'withdrawn');
  const pending = await send(url, 'GET', '/fr/api/approvals?state=pending', { headers: tokens.dave });
  assert.not.ok(pending.body.items.some((item: { id: number }) => [one.id, two.id].includes(item.id)));
});

test('an approval past its ttl: a vote is 410 and the expiry recorded; nothing is approved by the timeout', async () => {
  await policy(url, tokens, {
    name: 'tags-quick',
    operations: ['delete'],
    resources: ['tags'],
    approvals: 1,
    approvers: { tokens: ['bob'] },
    ttl: 'PT1S',
  });
  const tag = await send(url, 'POST', `${BASE}/tags`, {
    body: { name: 'old', color: '#000000', background: '#FFFFFF' },
  });
  const asked = await send(url, 'DELETE', `${BASE}/tags/${tag.body.id}`, { headers: tokens.alice });
  assert.is(asked.status, 202, asked.text);
  await new Promise((resolve) => setTimeout(resolve, 1300));
  const listed = await send(url, 'GET', `/fr/api/approvals/${asked.body.approval.id}`, { headers: tokens.dave });
  assert.is(listed.body.approval.state, 'expired', 'expired as soon as its time passed');
  const late = await act(url, tokens, 'bob', asked.body.approval.id, 'approve');
  assert.equal([late.status, late.body.code], [410, 'expired']);
  assert.is((await changesOf(url, tokens, 'ApprovalExpired')).filter((i) => i.id === asked.body.approval.id).length, 1);
  assert.is((await send(url, 'GET', `${BASE}/tags/${tag.body.id}`)).status, 200, 'the tag is still there');
});

test('a policy change is itself held by a policy naming policy-change', async () => {
  const guarded = await policy(url, tokens, {
    name: 'policies-need-carol',
    operations: ['policy-change'],
    approvals: 1,
    approvers: { tokens: ['carol'] },
  });
  const asked = await send(url, 'PATCH', `/fr/api/policies/${guarded}`, {
    headers: tokens.root,
    body: { enabled: false },
  });
  assert.is(asked.status, 202, asked.text);
  assert.is(asked.body.approval.operation, 'policy-change');
  assert.is((await act(url, tokens, 'bob', asked.body.approval.id, 'approve')).body.code, 'not_an_approver');
  assert.is((await act(url, tokens, 'carol', asked.body.approval.id, 'approve')).body.approval.state, 'approved');
  const run = await act(url, tokens, 'root', asked.body.approval.id, 'execute');
  assert.is(run.status, 200, run.text);
  const after = await send(url, 'GET', `/fr/api/policies/${guarded}`, { headers: tokens.root });
  assert.is(after.body.item?.enabled ?? after.body.enabled, false);
  const executed = (await changesOf(url, tokens, 'PolicyUpdated')).filter((item) => item.id === guarded);
  assert.is(executed.length, 1);
  const history = await send(url, 'GET', `/fr/api/policies/${guarded}/history`, { headers: tokens.root });
  const last = history.body.items.at(-1);
  assert.equal(last.approval, { id: asked.body.approval.id, requester: 'root', approvers: ['carol'] });
});

test.run();
