import { replay } from './application/replay.js';
import { StartRefused } from './application/secret-key.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger, openStores, packageVersion, start } from './main.js';
import { buildOpenApi } from './openapi/build.js';

const USAGE = `usage: pmacontrol-config <command>
  serve              start the HTTP service (PORT, HOST, DATA_DIR, CONFIG_SECRET_KEY, LOG_LEVEL, EVENT_STORE)
  replay [--apply]   rebuild every read model from the log and compare; --apply replaces the stored ones
  openapi            print the OpenAPI document`;

async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const running = await start(config, logger);
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    running.close().then(
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

async function runReplay(apply: boolean): Promise<number> {
  const config = loadConfig();
  const { store, readModels } = openStores(config, createLogger(config.logLevel));
  try {
    let shown = 0;
    const report = await replay(store, readModels, {
      apply,
      progress: (events) => {
        if (events - shown >= 10_000) {
          shown = events;
          process.stderr.write(`replayed ${events} events\n`);
        }
      },
    });
    console.log(`replayed ${report.events} events (log revision ${report.revision})`);
    for (const line of report.differences.slice(0, 100)) console.log(`  ${line}`);
    if (report.differences.length > 100) console.log(`  … and ${report.differences.length - 100} more`);
    if (report.differences.length === 0) {
      console.log('read models match the log');
      return 0;
    }
    console.log(
      apply
        ? `replaced the read models (${report.differences.length} differences)`
        : `${report.differences.length} differences; run with --apply to replace the read models`,
    );
    return apply ? 0 : 1;
  } finally {
    await store.close();
    readModels.close();
  }
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
    case 'openapi':
      console.log(JSON.stringify(buildOpenApi(packageVersion()), null, 2));
      return 0;
  }
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error) => {
    const prefix =
      error instanceof ConfigError ? 'configuration' : error instanceof StartRefused ? 'refused to start' : 'error';
    console.error(`${prefix}: ${(error as Error).message}`);
    process.exitCode = 1;
  },
);
