import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { spawnService, tempDir } from '../support/process.js';
import { act, changesOf, issueTokens, policy, prodServer } from './support.js';

/**
 * An approval runs at most once (section 16): two processes over one DATA_DIR, one killed with
 * SIGKILL between the last vote and the execution, then executions raced on both — exactly one
 * ApprovalExecuted, one deletion, every other attempt a 409.
 */

test('a delete approved, one instance killed -9, executions raced on two instances: executed once', async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir, POLL_INTERVAL_MS: '50' };
  let a = await spawnService(env);
  const b = await spawnService(env);
  try {
    const tokens = await issueTokens([a, b], env);
    await policy(a.url, tokens, {
      name: 'prod-delete',
      operations: ['delete'],
      resources: ['servers'],
      where: [{ field: 'id_environment', in: [1] }],
      approvals: 2,
      approvers: { roles: ['admin'] },
    });
    const id = await prodServer(a.url, 9, 'pw-9');
    const asked = await send(a.url, 'DELETE', `${BASE}/servers/${id}`, { headers: tokens.alice });
    assert.is(asked.status, 202, asked.text);
    const approval = asked.body.approval.id;
    assert.is((await act(b.url, tokens, 'bob', approval, 'approve')).status, 200);
    assert.is((await act(a.url, tokens, 'carol', approval, 'approve')).body.approval.state, 'approved');
    await a.kill9();
    a = await spawnService(env);
    const runs = await Promise.all([a, b, a, b, a, b].map((one) => act(one.url, tokens, 'alice', approval, 'execute')));
    const statuses = runs.map((run) => run.status).sort();
    assert.equal(statuses, [200, 409, 409, 409, 409, 409], runs.map((run) => run.text).join('\n'));
    const executed = (await changesOf(b.url, tokens, 'ApprovalExecuted')).filter((item) => item.id === approval);
    assert.is(executed.length, 1, 'one ApprovalExecuted');
    const deletions = (await changesOf(b.url, tokens, 'ServerDeleted')).filter((item) => item.id === id);
    assert.is(deletions.length, 1, 'one deletion');
    const history = await send(b.url, 'GET', `${BASE}/servers/${id}/history`);
    const last = history.body.items.at(-1);
    assert.equal(
      [last.type, last.actor, last.approval],
      ['ServerDeleted', 'alice', { id: approval, requester: 'alice', approvers: ['bob', 'carol'] }],
    );
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test.run();
