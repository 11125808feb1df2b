// Runs every uvu suite under test/, each file in a process of its own, a few at a time, and ends with the plain
// closing line CI reads: "N passed, N failed, N skipped". Many suites wait on processes, stores and browsers
// rather than on the CPU: TEST_JOBS of them at once (default 2, the machine's cores) end sooner than one after
// another (13.7 minutes on this machine, where one after another passed 15).
// Each file's output is printed whole when it ends; the slowest files are listed at the end with their times.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const JOBS = Math.max(1, Number(process.env.TEST_JOBS ?? 2));
// A hung test must fail the run, not hold CI until its own time limit.
const LIMIT_MS = 18 * 60 * 1000;
const FILE_LIMIT_MS = 10 * 60 * 1000;
const only = process.argv[2] ? new RegExp(process.argv[2]) : undefined;

function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? entry.name === 'node_modules' || entry.name === 'generated-client'
          ? []
          : files(join(dir, entry.name))
        : entry.name.endsWith('.test.ts')
          ? [join(dir, entry.name)]
          : [],
    )
    .sort();
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what it removes
const plain = (text) => text.replace(/\u001b\[[0-9;]*m/g, '');
const count = (text, label) => Number(plain(text).match(new RegExp(`${label}:\\s+(\\d+)`))?.[1] ?? 0);

/** The system suites, the longest, first: a long one started last would end the run alone. */
const ORDER = ['test/system/', 'test/pmacontrol/', 'test/log/', 'test/console/', 'test/openapi/'];
const rank = (file) => {
  const at = ORDER.findIndex((prefix) => file.startsWith(prefix));
  return at === -1 ? ORDER.length : at;
};
/**
 * Suites that measure how the service keeps up with time (a WAL checkpoint between steps of writes):
 * run alone, at the end, so that the others' load does not decide their outcome.
 */
const ALONE = ['test/event-store/wal-checkpointer.test.ts'];
const all = files(join(ROOT, 'test'))
  .map((file) => relative(ROOT, file))
  .filter((file) => !only || only.test(file))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const queue = all.filter((file) => !ALONE.includes(file));
const alone = all.filter((file) => ALONE.includes(file));

const totals = { total: 0, passed: 0, skipped: 0 };
const times = [];
const broken = [];
const running = new Set();

function runOne(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => {
      output += `\n${file}: still running after ${FILE_LIMIT_MS / 60000} minutes: stopped\n`;
      child.kill('SIGKILL');
    }, FILE_LIMIT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const seconds = (Date.now() - started) / 1000;
      process.stdout.write(`\n── ${file} (${seconds.toFixed(1)} s)\n${output}`);
      const total = count(output, 'Total');
      totals.total += total;
      totals.passed += count(output, 'Passed');
      totals.skipped += count(output, 'Skipped');
      if (code !== 0 || total + count(output, 'Skipped') === 0) broken.push(`${file} (exit ${code ?? signal})`);
      times.push([seconds, file]);
      resolve();
    });
  });
}

let stopped = false;
const watchdog = setTimeout(() => {
  console.error(`\ntests still running after ${LIMIT_MS / 60000} minutes: stopping them`);
  stopped = true;
  for (const child of running) child.kill('SIGKILL');
  queue.length = 0;
}, LIMIT_MS);

const started = Date.now();
await Promise.all(
  Array.from({ length: JOBS }, async () => {
    while (queue.length > 0) await runOne(queue.shift());
  }),
);
for (const file of alone) if (!stopped) await runOne(file);
clearTimeout(watchdog);
times.sort((a, b) => b[0] - a[0]);
console.log(`\nslowest files (${JOBS} at a time, ${((Date.now() - started) / 60000).toFixed(1)} min in all):`);
for (const [seconds, file] of times.slice(0, 12)) console.log(`  ${seconds.toFixed(1).padStart(6)} s  ${file}`);
if (broken.length > 0) console.log(`\nfiles that failed or ran no test:\n  ${broken.join('\n  ')}`);
const failed = totals.total - totals.passed; // uvu counts skipped tests outside Total
console.log(`\n${totals.passed} passed, ${failed} failed, ${totals.skipped} skipped`);
process.exit(stopped || broken.length > 0 || failed > 0 ? 1 : 0);
