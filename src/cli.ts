#!/usr/bin/env node
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

main(process.argv.slice(2)).then(
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
