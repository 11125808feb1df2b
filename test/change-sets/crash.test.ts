import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnService, tempDir } from '../support/process.js';
import { call, countIn, inventory, moves, openSet, stageMany } from './support.js';

/**
 * A merge is one append (section 17): the process killed with SIGKILL while it merges, then started
 * again on the same DATA_DIR — all of it or none of it, and the change set's state says which.
 */

test('kill -9 during a merge, then a restart: all or nothing', async () => {
  const dataDir = tempDir();
  let service = await spawnService({ DATA_DIR: dataDir });
  try {
    const { servers, environment } = await inventory(service.url, 400);
    const id = await openSet(service.url, 'crash');
    assert.is((await stageMany(service.url, id, moves(servers, environment))).status, 202);
    const merging = call(service.url, 'POST', `/fr/api/change-sets/${id}/merge`).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 40));
    await service.kill9();
    const answered = await merging;
    service = await spawnService({ DATA_DIR: dataDir });
    const moved = await countIn(service.url, environment);
    const state = (await call(service.url, 'GET', `/fr/api/change-sets/${id}`)).body.change_set.state;
    console.log(
      `  killed with the merge ${state === 'merged' ? 'recorded' : 'not recorded'} (answer: ${'status' in answered ? answered.status : 'none'})`,
    );
    assert.ok((moved === 0 && state === 'open') || (moved === 400 && state === 'merged'), `${moved} moved, ${state}`);
    if (state === 'open') assert.is((await call(service.url, 'POST', `/fr/api/change-sets/${id}/merge`)).status, 200);
    assert.is(await countIn(service.url, environment), 400);
  } finally {
    await service.stop();
  }
});

test.run();
