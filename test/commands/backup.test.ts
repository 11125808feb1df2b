import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BASE, send } from '../support/harness.js';
import { runCli, spawnService, tempDir } from '../support/process.js';

const it = suite('backups: copy-log while the service runs, then a restore from that file');

it('a backup taken under writes restores to a service that serves every entry it holds', async () => {
  const dataDir = tempDir();
  const service = await spawnService({ DATA_DIR: dataDir });
  const backup = join(tempDir(), 'events-backup.sqlite');
  let writing = true;
  let n = 0;
  const writer = (async () => {
    while (writing) {
      await send(service.url, 'POST', `${BASE}/tags`, {
        body: { name: `t${n++}`, color: '#000000', background: '#FFFFFF' },
      });
    }
  })();
  try {
    while (n < 30) await new Promise((r) => setTimeout(r, 20));
    const copied = await runCli(['copy-log', '--to', `sqlite:${backup}`], { DATA_DIR: dataDir });
    assert.is(copied.code, 0, copied.stderr);
    const events = Number(/copied (\d+) events/.exec(copied.stdout)![1]);
    writing = false;
    await writer;
    const live = await send(service.url, 'GET', `${BASE}/tags`);

    // Restore: the backup as the log of a new DATA_DIR, with the same key; the read models are rebuilt.
    const restored = tempDir();
    copyFileSync(backup, join(restored, 'events.sqlite'));
    copyFileSync(join(dataDir, 'secret.key'), join(restored, 'secret.key'));
    copyFileSync(join(dataDir, 'log-signing.key'), join(restored, 'log-signing.key'));
    const again = await spawnService({ DATA_DIR: restored });
    try {
      assert.match(again.output(), new RegExp(`"position":${events}\\b`), 'it starts at the end of the backup');
      const tags = (await send(again.url, 'GET', `${BASE}/tags`)).body.items;
      assert.ok(tags.length >= 30, `${tags.length} tags restored`);
      // The backup is a prefix of the log: every tag in it is the live one, as it was.
      const byId = new Map(live.body.items.map((t: { id: number }) => [t.id, t]));
      for (const tag of tags) assert.equal(tag, byId.get(tag.id));
    } finally {
      await again.stop();
    }
  } finally {
    writing = false;
    await writer;
    await service.stop();
  }
});

it.run();
