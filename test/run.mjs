// Runs every uvu suite under test/ and ends with the plain closing line CI reads: "N passed, N failed, N skipped".
import { spawn } from 'node:child_process';

const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', '\\.test\\.ts$'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let output = '';
// A hung test must fail the run, not hold CI until its own time limit.
const LIMIT_MS = 15 * 60 * 1000;
const watchdog = setTimeout(() => {
  console.error(`\ntests still running after ${LIMIT_MS / 60000} minutes: stopping them`);
  child.kill('SIGKILL');
}, LIMIT_MS);
child.stdout.on('data', (chunk) => {
  output += chunk;
  process.stdout.write(chunk);
});
child.on('exit', (code) => {
  clearTimeout(watchdog);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what it removes
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const count = (label) => Number(plain.match(new RegExp(`${label}:\\s+(\\d+)`))?.[1] ?? 0);
  const total = count('Total');
  const passed = count('Passed');
  const skipped = count('Skipped');
  const failed = total - passed; // uvu counts skipped tests outside Total
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(code ?? 1);
});
