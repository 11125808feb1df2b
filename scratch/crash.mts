import { BASE, send } from '../test/support/harness.js';
import { runCli, spawnService, tempDir } from '../test/support/process.js';

async function once(i: number) {
  const dataDir = tempDir();
  const s = await spawnService({ DATA_DIR: dataDir });
  const killAt = 60 + Math.floor(Math.random() * 80);
  let sent = 0;
  let killed = false;
  const writers = Array.from({ length: 8 }, async () => {
    while (!killed && sent < 200) {
      const n = sent++;
      const p = send(s.url, 'POST', `${BASE}/tags`, { body: { name: `t${n}`, color: '#000000', background: '#FFFFFF' } }).catch(() => {});
      if (n === killAt) { await new Promise((r) => setTimeout(r, 1)); killed = true; await s.kill9(); }
      await p;
    }
  });
  await Promise.all(writers);
  const s2 = await spawnService({ DATA_DIR: dataDir });
  for (let n = 0; n < 5; n++) await send(s2.url, 'POST', `${BASE}/tags`, { body: { name: `after${n}`, color: '#000000', background: '#FFFFFF' } });
  await s2.stop();
  const r = await runCli(['replay'], { DATA_DIR: dataDir });
  console.log(i, killAt, r.code, r.stdout.split('\n').slice(0, 6).join(' | '));
  return r.code;
}
let bad = 0;
for (let i = 0; i < 15; i++) if ((await once(i)) !== 0) bad++;
console.log('bad', bad);
