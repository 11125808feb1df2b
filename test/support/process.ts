import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The processes run the build (`npm test` makes it first): what users run, and a second less per start
 * than compiling the sources through tsx, over the hundreds of starts the suites make. Without a build,
 * the sources.
 */
const BUILT = join(ROOT, 'dist/src/cli.js');
export const CLI_ARGS = existsSync(BUILT) ? [BUILT] : ['--import', 'tsx', join(ROOT, 'src/cli.ts')];

const made = new Set<string>();
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system's temporary one, removed when the test process exits. */
export function tempDir(prefix = 'pmacontrol-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
}

/** Starts `src/cli.ts serve` as its own process on 127.0.0.1 and a free port, and waits until it listens. */
export function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], {
    cwd: ROOT,
    // No drain by default: a test that stops a service waits for nothing (shutdown.test.ts drains).
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (!line) return;
      clearTimeout(timer);
      const port = (JSON.parse(line) as { port: number }).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        child,
        output: () => output,
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
        kill9: async () => {
          child.kill('SIGKILL');
          await exited;
        },
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${output}`));
    });
  });
}

/**
 * A data directory a service has served (commands refuse any other): the service is started on a
 * new one with `env`, and stopped.
 */
export async function servedDataDir(env: Record<string, string> = {}): Promise<string> {
  const dir = tempDir();
  const service = await spawnService({ ...env, DATA_DIR: dir });
  await service.stop();
  return dir;
}

/** Runs the CLI to completion; a run still going after `limitMs` is killed and reported with code null. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  limitMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
