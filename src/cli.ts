#!/usr/bin/env node
import { isMainThread, Worker } from 'node:worker_threads';
import { StartRefused } from './application/start-refused.js';
import { type CommandHelp, commandHelp, overview, Refused, UsageError } from './commands/catalog.js';
import { commandOf, HELPS } from './commands/index.js';
import { ConfigError } from './config.js';
import { packageVersion } from './main.js';

const asksHelp = (args: string[]) => args.includes('--help') || args.includes('-h');

/** The command line: `--version`, `--help`, `<command> --help` (exit 0, nothing started), or a command. */
async function main(argv: string[]): Promise<{ code: number; help?: CommandHelp }> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    console.log(packageVersion());
    return { code: 0 };
  }
  if (name === undefined || asksHelp([name]) || name === 'help') {
    const help = name === 'help' && rest[0] ? commandOf(rest[0])?.help : undefined;
    console.log(help ? commandHelp(help) : overview(HELPS));
    return { code: name === undefined ? 2 : 0 };
  }
  const command = commandOf(name);
  if (!command) {
    console.error(`unknown command "${name}"\n\n${overview(HELPS)}`);
    return { code: 2 };
  }
  const { help } = command;
  if (asksHelp(rest)) {
    console.log(commandHelp(help));
    return { code: 0 };
  }
  try {
    return { code: await command.run(rest) };
  } catch (error) {
    throw Object.assign(error as Error, { help });
  }
}

/**
 * A command that folds the whole log (`replay`) makes most of its objects for one batch only: from
 * the built CLI, in a process given no `--max-semi-space-size` of its own, it runs in a thread whose
 * young generation is the one `--max-semi-space-size=64` gives (three semi-spaces of 64 MiB). The
 * command as a user runs it took 62.7 s on a 2,000,000-event history without it, 46.9 s with it
 * (`npm run bench:history`, its command row); the thread's exit code is the process's.
 */
function inRoomyThread(argv: string[]): Promise<number> | undefined {
  if (!isMainThread || !import.meta.url.endsWith('.js') || asksHelp(argv)) return undefined;
  if (process.execArgv.some((arg) => arg.startsWith('--max-semi-space-size'))) return undefined;
  if (!commandOf(argv[0] ?? '')?.foldsLog) return undefined;
  const worker = new Worker(new URL(import.meta.url), { argv, resourceLimits: { maxYoungGenerationSizeMb: 192 } });
  return new Promise((resolve, reject) => {
    worker.on('error', reject);
    worker.on('exit', resolve);
  });
}

const argv = process.argv.slice(2);
(inRoomyThread(argv)?.then((code) => ({ code })) ?? main(argv)).then(
  ({ code }) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    const help = (error as { help?: CommandHelp }).help;
    if (error instanceof UsageError || String((error as { code?: string }).code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(error as Error).message}\n\n${help ? commandHelp(help) : overview(HELPS)}`);
      process.exitCode = 2;
      return;
    }
    const prefix =
      error instanceof ConfigError
        ? 'configuration'
        : error instanceof StartRefused
          ? 'refused to start'
          : error instanceof Refused
            ? 'refused'
            : 'error';
    console.error(`${prefix}: ${(error as Error).message}`);
    process.exitCode = 1;
    // What a failed command leaves open (a pool, a timer) never keeps the process, nor its exit code, waiting.
    setTimeout(() => process.exit(), 1000).unref();
  },
);
