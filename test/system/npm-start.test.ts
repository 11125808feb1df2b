import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, tempDir } from '../support/process.js';

const it = suite('npm start: the compiled build, stopped by a signal to npm itself');

/** Whether something accepts connections on the port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  it(`${signal} to the npm start process stops the service; no server is left behind`, async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: tempDir(), PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: whatever a failure leaves behind is killed with it at the end.
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    try {
      await stopsOn(signal, npm, exited);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group is gone: nothing was left behind
      }
    }
  });
}

async function stopsOn(
  signal: NodeJS.Signals,
  npm: ChildProcessByStdio<null, Readable, Readable>,
  exited: Promise<unknown>,
) {
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    npm.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (line) resolve(JSON.parse(line).port);
    });
    npm.once('exit', () => reject(new Error(`npm start exited before listening:\n${output}`)));
  });
  assert.ok(output.includes('dist/src/cli.js') || !output.includes('tsx'), 'runs the compiled build');
  assert.ok(await listening(port));
  npm.kill(signal);
  await exited;
  let stillThere = true;
  for (let i = 0; i < 50 && stillThere; i++) {
    stillThere = await listening(port);
    if (stillThere) await new Promise((r) => setTimeout(r, 100));
  }
  assert.not.ok(stillThere, `the service still listens on ${port} after ${signal} to npm`);
}

it.run();
