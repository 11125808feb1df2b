#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { newLogKey } from './application/log-key.js';
import { StartRefused } from './application/start-refused.js';
import { type CommandHelp, commandHelp, helpOf, overview, UsageError } from './commands/catalog.js';
import { runReplay } from './commands/replay.js';
import { runRotateKey } from './commands/rotate-key.js';
import { runToken } from './commands/token.js';
import { runExport, runImport } from './commands/transfer.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, packageVersion, start } from './main.js';
import { buildOpenApi } from './openapi/build.js';

/**
 * How far V8 lets its heap grow past what the last full collection found alive, in percent: left to
 * itself, V8 picks up to 300% for a process that allocates as fast as this one does under writes
 * (bench/http.ts, RSS at 100,000 servers). A `--heap-growing-percent` given to node itself wins.
 */
const HEAP_GROWING_PERCENT = 50;

async function serve(): Promise<void> {
  if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // The signals are taken before the start ends (the "listening" line is written just before it
  // does): one that comes meanwhile ends the process with 0, as a stop does; nothing was answered
  // yet, and what the start was writing is made whole again at the next start.
  let running: Awaited<ReturnType<typeof start>> | undefined;
  const shutdown = (signal: string) => {
    if (!running) {
      logger.info({ signal }, 'stopped before the start ended');
      process.exit(0);
    }
    logger.info({ signal }, 'shutting down');
    running.shutdown().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: { message: (error as Error).message } }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  running = await start(config, logger);
}

function runOpenApi(args: string[]): number {
  const document = `${JSON.stringify(buildOpenApi(packageVersion()), null, 2)}\n`;
  if (args.length === 0) process.stdout.write(document);
  else if (args.length === 2 && args[0] === '--out') writeFileSync(args[1], document);
  else throw new UsageError(`openapi takes --out FILE only, not ${args.join(' ')}`);
  return 0;
}

/**
 * Each command's work (-1: it keeps running). The commands that read MariaDB are loaded only when
 * run: their client takes a tenth of a second to load, which `serve` does not need.
 */
const RUN: Record<string, (args: string[]) => Promise<number> | number> = {
  serve: async (args) => {
    if (args.length > 0) throw new UsageError(`serve takes no argument, not ${args.join(' ')}`);
    await serve();
    return -1;
  },
  replay: runReplay,
  openapi: runOpenApi,
  token: runToken,
  export: runExport,
  import: runImport,
  'import-pmacontrol': async (args) => (await import('./commands/import-pmacontrol.js')).runImportPmaControl(args),
  'pmacontrol-ini': async (args) => (await import('./commands/pmacontrol-ini.js')).runPmaControlIni(args),
  'rotate-key': runRotateKey,
  'copy-log': async (args) => (await import('./commands/copy-log.js')).runCopyLog(args),
  verify: async (args) => (await import('./commands/verify.js')).runVerify(args),
  'log-key': (args) => {
    if (args.length > 0) throw new UsageError(`log-key takes no argument, not ${args.join(' ')}`);
    console.log(newLogKey());
    return 0;
  },
};

const asksHelp = (args: string[]) => args.includes('--help') || args.includes('-h');

/** The command line: `--version`, `--help`, `<command> --help` (exit 0, nothing started), or a command. */
async function main(argv: string[]): Promise<{ code: number; help?: CommandHelp }> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    console.log(packageVersion());
    return { code: 0 };
  }
  if (name === undefined || asksHelp([name]) || name === 'help') {
    const help = name === 'help' && rest[0] ? helpOf(rest[0]) : undefined;
    console.log(help ? commandHelp(help) : overview());
    return { code: name === undefined ? 2 : 0 };
  }
  const help = helpOf(name);
  if (!help) {
    console.error(`unknown command "${name}"\n\n${overview()}`);
    return { code: 2 };
  }
  if (asksHelp(rest)) {
    console.log(commandHelp(help));
    return { code: 0 };
  }
  try {
    return { code: await RUN[name](rest) };
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
      console.error(`${(error as Error).message}\n\n${help ? commandHelp(help) : overview()}`);
      process.exitCode = 2;
      return;
    }
    const prefix =
      error instanceof ConfigError ? 'configuration' : error instanceof StartRefused ? 'refused to start' : 'error';
    console.error(`${prefix}: ${(error as Error).message}`);
    process.exitCode = 1;
  },
);
