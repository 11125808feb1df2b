import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs `total` calls of `call` with `concurrency` in flight; returns requests/s and latency percentiles in ms. */
export async function measure(
  name: string,
  total: number,
  concurrency: number,
  call: (i: number) => Promise<void>,
): Promise<number> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t = performance.now();
        await call(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  console.log(
    `${name.padEnd(28)} ${String(total).padStart(6)} req  ${(total / seconds).toFixed(0).padStart(7)} req/s  p50 ${pct(50).padStart(7)} ms  p99 ${pct(99).padStart(7)} ms`,
  );
  return total / seconds;
}

/** p50 and p99 of a list of durations, in ms. */
export function percentiles(times: number[]): { p50: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { p50: at(50), p99: at(99) };
}

/** One line per row: name, p50, p99, and what the row should reach. */
export function table(rows: { name: string; p50: number; p99: number; target?: string }[]): void {
  for (const { name, p50, p99, target } of rows) {
    console.log(
      `${name.padEnd(34)} p50 ${p50.toFixed(1).padStart(8)} ms  p99 ${p99.toFixed(1).padStart(8)} ms  ${target ?? ''}`,
    );
  }
}

/** The directories scratchDir made, removed by one exit listener. */
const made = new Set<string>();
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system's temporary one, removed when this process exits. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** A service started in its own process, as users run it. */
export interface Served {
  url: string;
  pid: number;
  /** From spawning it to its `listening` line, in ms. */
  startMs: number;
  /** Sends SIGTERM and resolves once the process has ended. */
  stop: () => Promise<void>;
  /** Its log lines so far (stdout, JSON). */
  lines: () => string[];
}

/** Starts `serve` with `env` (`args`: how the CLI is run) on a free port, and waits until it listens. */
export async function serveProcess(env: Record<string, string>, args: string[]): Promise<Served> {
  const started = performance.now();
  const child = spawn(process.execPath, [...args, 'serve'], {
    env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const port = await new Promise<number>((resolve) =>
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const line = output.split('\n').find((l) => l.includes('"listening"'));
      if (line) resolve(JSON.parse(line).port);
    }),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    startMs: performance.now() - started,
    lines: () => output.split('\n').filter(Boolean),
    stop: () => {
      const ended = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      child.kill('SIGTERM');
      return ended;
    },
  };
}

/**
 * `count` GETs one after another, each read whole and required to answer 200; their times in ms.
 * A GET of `/healthz` first, not timed: the client's own first request (its HTTP stack loaded, its
 * connection opened: 50–80 ms on Node 20) is not the service's.
 */
export async function timedGets(url: string, count: number, path: (i: number) => string): Promise<number[]> {
  await (await fetch(`${url}/healthz`)).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url + path(i));
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path(i)}: ${response.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** A process's resident memory now, in MiB. */
export const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** What a `replay` process said. */
export interface ReplayRun {
  stdout: string;
  code: number | null;
  /** The last progress line's count, with when it came (ms after the start). */
  reached: { events: number; ms: number };
  /** Where it said it resumed a stopped rebuild, with when it said so. */
  resumed?: { events: number; ms: number };
}

/** `replay` as users run it (the compiled CLI); killed with SIGKILL once it reports `killPast` events. */
export function replayProcess(env: Record<string, string>, killPast = Number.POSITIVE_INFINITY): Promise<ReplayRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/src/cli.js', 'replay'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: ReplayRun = { stdout: '', code: null, reached: { events: 0, ms: 0 } };
  let pending = '';
  child.stdout.on('data', (chunk) => {
    run.stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    const ms = performance.now() - started;
    for (const line of lines) {
      const progress = /^replayed (\d+) events$/.exec(line);
      const resumed = /^resuming the rebuild a replay left at event (\d+)$/.exec(line);
      if (progress) run.reached = { events: Number(progress[1]), ms };
      else if (resumed) run.resumed = { events: Number(resumed[1]), ms };
      else process.stderr.write(`replay: ${line}\n`);
    }
    if (run.reached.events >= killPast) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ ...run, code }));
  });
}
