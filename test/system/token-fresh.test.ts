import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { send } from '../support/harness.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

/**
 * A token issued by the CLI while the service runs works at its first request: the service, not
 * knowing it, reads the log's head once before it answers 401 — however long until its next poll.
 */

test('a token the CLI just issued works at once; an unknown one is still a 401', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir, POLL_INTERVAL_MS: '60000', ANONYMOUS_ROLE: 'none' });
  try {
    await send(service.url, 'GET', '/fr/api/whoami');
    const issued = await runCli(['token', 'create', '--name', 'fresh', '--role', 'reader'], { DATA_DIR: dataDir });
    assert.is(issued.code, 0, issued.stderr);
    const token = issued.stdout.trim().split('\n').pop()!;
    const whoami = await send(service.url, 'GET', '/fr/api/whoami', { headers: { Authorization: `Bearer ${token}` } });
    assert.equal([whoami.status, whoami.body.actor], [200, 'fresh']);
    const read = await send(service.url, 'GET', '/fr/api/config/tags/1', {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.is(read.status, 404, 'the fast read path too');
    const unknown = `pmc_${randomBytes(32).toString('base64url')}`;
    const refused = await send(service.url, 'GET', '/fr/api/whoami', {
      headers: { Authorization: `Bearer ${unknown}` },
    });
    assert.equal([refused.status, refused.body.detail], [401, 'the token is unknown']);
  } finally {
    await service.stop();
  }
});

test.run();
