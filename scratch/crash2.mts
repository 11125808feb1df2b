import { request, Agent } from 'node:http';
import { BASE, send } from '../test/support/harness.js';
import { spawn } from 'node:child_process';
import { runCli, tempDir } from '../test/support/process.js';

function spawnService(env: Record<string, string>) {
  const child = spawn(process.execPath, ['dist/src/cli.js', 'serve'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((r) => child.once('exit', r));
  let out = '';
  return new Promise<any>((resolve) => {
    child.stdout.on('data', (c) => { out += c; const line = out.split('\n').find((l) => l.includes('"listening"')); if (line && !(child as any).done) { (child as any).done = true; resolve({ url: `http://127.0.0.1:${JSON.parse(line).port}`, stop: async () => { child.kill('SIGTERM'); return exited; }, kill9: async () => { child.kill('SIGKILL'); await exited; } }); } });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
function post(url: string, body: unknown): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request({ hostname: u.hostname, port: u.port, path: `${BASE}/tags`, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode!)); });
    req.on('error', () => resolve(0));
    req.end(JSON.stringify(body));
  });
}

async function once(i: number) {
  const dataDir = tempDir();
  const s = await spawnService({ DATA_DIR: dataDir });
  const killAt = 60 + Math.floor(Math.random() * 80);
  const posts: Promise<number>[] = [];
  for (let n = 0; n < 200; n++) {
    posts.push(post(s.url, { name: `t${n}`, color: '#000000', background: '#FFFFFF' }));
    if (n === killAt) { await new Promise((r) => setTimeout(r, 1)); await s.kill9(); break; }
    await new Promise((r) => setTimeout(r, 1));
  }
  const statuses = await Promise.all(posts);
  const s2 = await spawnService({ DATA_DIR: dataDir });
  const after: Promise<number>[] = [];
  for (let n = 0; n < 30; n++) { after.push(post(s2.url, { name: `after${n}`, color: '#000000', background: '#FFFFFF' })); await new Promise((r) => setTimeout(r, 1)); }
  await new Promise((r) => setTimeout(r, Math.random() * 20));
  await s2.stop();
  await Promise.all(after);
  const r = await runCli(['replay'], { DATA_DIR: dataDir });
  console.log(i, killAt, statuses.filter((x) => x === 201).length, r.code, r.stdout.split('\n').slice(0, 8).join(' | '));
  return r.code;
}
let bad = 0;
for (let i = 0; i < 15; i++) if ((await once(i)) !== 0) bad++;
console.log('bad', bad);
agent.destroy();
