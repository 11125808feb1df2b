import { spawnSync } from 'node:child_process';

/**
 * Whether a Debian tool the tests use is installed. `.ci/run` installs each one and sets its
 * `<NAME>_REQUIRED` variable, which makes an absence a failure; elsewhere a test without it is
 * skipped, and says so.
 */
export function toolAvailable(command: string, args: string[], required: string, what: string): boolean {
  const found = spawnSync(command, args, { stdio: 'ignore' });
  const ok = found.status === 0;
  if (!ok && process.env[required]) throw new Error(`${required} is set but ${command} is not installed (${what})`);
  if (!ok) console.log(`\n  SKIPPED: ${what} — ${command} is not installed (.ci/run installs it)\n`);
  return ok;
}
