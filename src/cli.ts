#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { type ReplayReport, replay } from './application/replay.js';
import { StartRefused } from './application/secret-key.js';
import { ROTATE_KEY_USAGE, runRotateKey } from './commands/rotate-key.js';
import { runToken, TOKEN_USAGE, UsageError } from './commands/token.js';
import { runExport, runImport, TRANSFER_USAGE } from './commands/transfer.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, openStores, packageVersion, start } from './main.js';
import { buildOpenApi } from './openapi/build.js';

/**
 * The usage text. The commands that read MariaDB are loaded only when run (or for this text): their
 * client takes a tenth of a second to load, which `serve` does not need.
 */
async function usage(): Promise<string> {
  const { COPY_LOG_USAGE } = await import('./commands/copy-log.js');
  const { IMPORT_PMACONTROL_USAGE } = await import('./commands/import-pmacontrol.js');
  return `usage: pmacontrol-config <command>
  serve              start the HTTP service (PORT, HOST, DATA_DIR, CONFIG_SECRET_KEY, LOG_LEVEL, EVENT_STORE)
  replay [--apply]   rebuild every read model from the log and compare; --apply replaces the stored ones
  openapi [--out F]  print the OpenAPI document (or write it to F)
${TOKEN_USAGE}
${TRANSFER_USAGE}
${IMPORT_PMACONTROL_USAGE}
${ROTATE_KEY_USAGE}
${COPY_LOG_USAGE}`;
}

/**
 * How far V8 lets its heap grow past what the last full collection found alive, in percent. Left to
 * itself, V8 picks up to 300% for a process that allocates as fast as this one does under writes:
 * with 100,000 servers (about 130 MB alive) the heap reached 280-410 MB and the process 408-530 MB.
 * At 50% it stays near 220 MB (the process near 360 MB), with no loss of throughput or start-up time
 * measured (README, Benchmarks). A `--heap-growing-percent` given to node itself wins.
 */
const HEAP_GROWING_PERCENT = 50;

async function serve(): Promise<void> {
  if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const running = await start(config, logger);
  const shutdown = (signal: string) => {
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
}

/** `replay [--apply]`: rebuilds the read models from the log beside the stored ones and compares. */
async function runReplay(apply: boolean): Promise<number> {
  const config = loadConfig();
  const { store, readModels, rebuild, synced } = await openStores(config, createLogger(config.logLevel));
  await synced;
  const fresh = rebuild.open();
  let shown = 0;
  const progress = (events: number) => {
    if (events - shown < 10_000) return;
    shown = events;
    process.stderr.write(`replayed ${events} events\n`);
  };
  let report: ReplayReport;
  try {
    report = await replay(store, readModels, fresh, progress);
  } finally {
    await store.close();
    readModels.close();
    fresh.close();
  }
  console.log(`replayed ${report.events} events`);
  for (const line of report.differences.slice(0, 100)) console.log(`  ${line}`);
  if (report.differences.length > 100) console.log(`  … and ${report.differences.length - 100} more`);
  if (report.differences.length === 0) {
    rebuild.discard();
    console.log('read models match the log');
    return 0;
  }
  if (!apply) {
    rebuild.discard();
    console.log(`${report.differences.length} differences; run with --apply to replace the read models`);
    return 1;
  }
  rebuild.adopt();
  console.log(`replaced the read models (${report.differences.length} differences)`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      await serve();
      return -1;
    case 'replay':
      if (rest.some((a) => a !== '--apply')) break;
      return runReplay(rest.includes('--apply'));
    case 'token':
      return runToken(rest);
    case 'copy-log':
      return (await import('./commands/copy-log.js')).runCopyLog(rest);
    case 'export':
      return runExport(rest);
    case 'import':
      return runImport(rest);
    case 'import-pmacontrol':
      return (await import('./commands/import-pmacontrol.js')).runImportPmaControl(rest);
    case 'rotate-key':
      return runRotateKey(rest);
    case 'openapi': {
      const document = `${JSON.stringify(buildOpenApi(packageVersion()), null, 2)}\n`;
      if (rest.length === 0) process.stdout.write(document);
      else if (rest.length === 2 && rest[0] === '--out') writeFileSync(rest[1], document);
      else break;
      return 0;
    }
  }
  console.error(await usage());
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    if (error instanceof UsageError || String((error as { code?: string }).code).startsWith('ERR_PARSE_ARGS')) {
      const message = (error as Error).message;
      process.exitCode = 2;
      return usage().then((text) => console.error(`${message}\n${text}`));
    }
    const prefix =
      error instanceof ConfigError ? 'configuration' : error instanceof StartRefused ? 'refused to start' : 'error';
    console.error(`${prefix}: ${(error as Error).message}`);
    process.exitCode = 1;
  },
);
