// What the benchmarks run: the service (the real CLI, its own process, its own data directory) and
// the framework floor, each in a process of its own, and autocannon as the load generator.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { scratchDir } from './lib.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The servers route every bench loads. */
export const SERVERS = '/fr/api/config/servers';

/**
 * A valid new server, its address made from `i` (unique per `i` below 2^24); the name is `i` with a
 * random suffix, unique on any target whatever it already holds.
 */
export const newServer = (i: number) => ({
  id_client: 99,
  id_environment: 1,
  name: `bench-${i}-${randomBytes(3).toString('hex')}`,
  ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  port: 3306,
  login: 'monitor',
  passwd: 'secret',
});

export interface Target {
  name: string;
  url: string;
  child: ChildProcess;
  /** Resident memory of the process, in MiB. */
  rss(): number;
  /** CPU time the process has used so far, in seconds (see cpuOf). */
  cpu(): ThreadsCpu | undefined;
  stop(): Promise<void>;
}

/** CPU time of a process: its main thread (where JavaScript runs), and all its other threads together. */
export interface ThreadsCpu {
  main: number;
  /** The saving and checkpointing threads, garbage collection's helpers, libuv's pool (fsync). */
  others: number;
}

/** Linux's clock ticks per second, in which /proc counts CPU time (USER_HZ, 100 on every build in use). */
const TICKS = 100;

/**
 * A process's CPU time by thread, read from /proc (Linux); undefined elsewhere. Node names every
 * thread `node`: the main thread is the one whose id is the process's.
 */
function cpuOf(pid: number): ThreadsCpu | undefined {
  const cpu: ThreadsCpu = { main: 0, others: 0 };
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const task of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // After the name in parentheses: state, then 10 fields, then utime and stime (in ticks).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS;
    if (Number(task) === pid) cpu.main += seconds;
    else cpu.others += seconds;
  }
  return cpu;
}

/** Starts a process and waits for the line that gives its port. */
function startProcess(
  name: string,
  args: string[],
  env: Record<string, string>,
  port: (line: string) => number | undefined,
) {
  // TypeScript sources through tsx; the service's compiled build (dist/) as it is.
  const node = args[0].endsWith('.ts') ? ['--import', 'tsx', ...args] : args;
  const child = spawn(process.execPath, node, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise<Target>((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = output
        .split('\n')
        .map(port)
        .find((p) => p !== undefined);
      if (found === undefined) return;
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      resolve({
        name,
        url: `http://127.0.0.1:${found}`,
        child,
        rss: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024,
        cpu: () => cpuOf(child.pid!),
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

const jsonLine = (line: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
};

/** The service as users run it, on the embedded store (synchronous=FULL: every answer after fsync). */
export function startService(
  dataDir = scratchDir('pmacontrol-bench-'),
  extra: Record<string, string> = {},
  /** Another build's entry (a checkout's `dist/src/cli.js`) to run instead of this one's. */
  cli = 'dist/src/cli.js',
): Promise<Target & { dataDir: string }> {
  // As users run it: LOG_LEVEL=info, one access-log line per request, is part of what is measured.
  const env = {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ANONYMOUS_ROLE: 'writer',
    ...extra,
  };
  // As `npm start` runs it: the compiled build (`npm run bench` builds it first).
  return startProcess(cli === 'dist/src/cli.js' ? 'service' : 'baseline', [cli, 'serve'], env, (line) => {
    const parsed = jsonLine(line);
    return parsed?.msg === 'listening' ? (parsed.port as number) : undefined;
  }).then((target) => ({ ...target, dataDir }));
}

/** The service started on an existing data directory, and the seconds from spawning it to its first `listening` line. */
export async function startTimed(dataDir: string): Promise<{ target: Target & { dataDir: string }; seconds: number }> {
  const started = performance.now();
  const target = await startService(dataDir);
  return { target, seconds: (performance.now() - started) / 1000 };
}

/** The framework floor: bare Koa + @koa/router over a Map. */
export function startFloor(): Promise<Target> {
  return startProcess('koa floor', ['bench/anchors/koa-floor.ts'], { PORT: '0' }, (line) => {
    const parsed = jsonLine(line);
    return typeof parsed?.port === 'number' ? parsed.port : undefined;
  });
}

export interface Load {
  /** Requests per second over the run. */
  rps: number;
  /** Answers counted over the run (requests per second × its seconds). */
  requests: number;
  p50: number;
  p99: number;
  /** Answers that were not 2xx, and connection errors: a run with any is not a measurement. */
  failed: number;
}

export interface Scenario {
  name: string;
  method: 'GET' | 'POST' | 'PATCH';
  /** The path and body of the i-th request. */
  request: (i: number) => { path: string; body?: unknown };
  connections?: number;
  seconds?: number;
}

/** Runs one scenario against one target with autocannon (keep-alive connections, in this process). */
export async function load(target: Target, scenario: Scenario, seconds = scenario.seconds ?? 5): Promise<Load> {
  let i = 0;
  const result = await autocannon({
    url: target.url,
    connections: scenario.connections ?? 32,
    duration: seconds,
    requests: [
      {
        method: scenario.method,
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          const { path, body } = scenario.request(i++);
          return { ...request, path, body: body === undefined ? undefined : JSON.stringify(body) };
        },
      },
    ],
  });
  return {
    rps: result.requests.total / seconds,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

/** Sends `count` requests, `concurrency` at a time, and fails on any answer that is not 2xx. */
export async function seed(
  url: string,
  count: number,
  request: (i: number) => { method: string; path: string; body?: unknown },
  concurrency = 32,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const { method, path, body } = request(next++);
        const response = await fetch(url + path, {
          method,
          headers: { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
      }
    }),
  );
}

/** Splits a keep-alive connection's bytes into answers: Content-Length or chunked framing, body skipped. */
class AnswerCounter {
  private head = Buffer.alloc(0);
  private remaining = -1;
  private chunked = false;
  private tail = '';
  failed = 0;

  constructor(private readonly done: () => void) {}

  take(chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0) {
      if (this.remaining < 0) {
        this.head = Buffer.concat([this.head, data]);
        const end = this.head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const text = this.head.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 2/.test(text)) this.failed += 1;
        this.chunked = /transfer-encoding:\s*chunked/i.test(text);
        this.remaining = this.chunked ? Infinity : Number(/content-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
        data = this.head.subarray(end + 4);
        this.head = Buffer.alloc(0);
        this.tail = '';
      }
      data = this.chunked ? this.takeChunked(data) : this.takeSized(data);
    }
  }

  /** One answer at a time per connection: the last chunk ends what was received. */
  private takeChunked(data: Buffer): Buffer {
    this.tail = (this.tail + data.subarray(-5).toString('latin1')).slice(-5);
    if (this.tail === '0\r\n\r\n') this.finish();
    return data.subarray(data.length);
  }

  private takeSized(data: Buffer): Buffer {
    const used = Math.min(this.remaining, data.length);
    this.remaining -= used;
    if (this.remaining === 0) this.finish();
    return data.subarray(used);
  }

  private finish(): void {
    this.remaining = -1;
    this.done();
  }
}

/**
 * GET load with a client that only counts bytes (keep-alive, no parsing of the body): for large
 * answers, where autocannon's own parsing would be what is measured.
 */
export async function rawGetLoad(target: Target, path: string, seconds: number, connections = 32): Promise<Load> {
  const { hostname, port } = new URL(target.url);
  const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
  const latencies: number[] = [];
  let failed = 0;
  const until = performance.now() + seconds * 1000;
  const connection = () =>
    new Promise<void>((resolve) => {
      const socket = connect(Number(port), hostname);
      let sent = 0;
      const send = () => {
        if (performance.now() >= until) return socket.end(resolve);
        sent = performance.now();
        socket.write(request);
      };
      const counter = new AnswerCounter(() => {
        latencies.push(performance.now() - sent);
        send();
      });
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => counter.take(chunk));
      socket.on('close', () => {
        failed += counter.failed;
        resolve();
      });
      socket.on('error', () => (failed += 1));
    });
  await Promise.all(Array.from({ length: connections }, connection));
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0);
  return { rps: latencies.length / seconds, requests: latencies.length, p50: at(0.5), p99: at(0.99), failed };
}
