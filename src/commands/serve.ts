import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { loadConfig } from '../config.js';
import { apiDocument, createLogger, start } from '../main.js';
import { UsageError } from './catalog.js';

/**
 * How far V8 lets its heap grow past what the last full collection found alive, in percent: left to
 * itself, V8 picks up to 300% for a process that allocates as fast as this one does under writes
 * (bench/http.ts, RSS at 100,000 servers). A `--heap-growing-percent` given to node itself wins.
 */
const HEAP_GROWING_PERCENT = 50;

/** `serve`: the service, until SIGTERM or SIGINT (-1: it keeps running). */
export async function runServe(args: string[]): Promise<number> {
  if (args.length > 0) throw new UsageError(`serve takes no argument, not ${args.join(' ')}`);
  if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // The signals are taken before the start ends (the "listening" line is written just before it
  // does): one that comes meanwhile ends the process with 0, as a stop does; nothing was answered
  // yet, and what the start was writing is made whole again at the next start. A second signal
  // during the drain is absorbed — a process group's SIGTERM reaches node twice when npm starts it,
  // npm passing its own on — so that the drain ends and saves; a third ends the process at once.
  let running: Awaited<ReturnType<typeof start>> | undefined;
  let signals = 0;
  const stop = (signal: string) => {
    if (!running) {
      logger.info({ signal }, 'stopped before the start ended');
      process.exit(0);
    }
    signals++;
    if (signals === 2) {
      logger.info({ signal }, 'already stopping: the drain goes on (a third signal ends the process at once)');
      return;
    }
    if (signals > 2) {
      logger.warn({ signal }, 'a third signal: ended at once, without finishing the drain');
      process.exit(1);
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
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  running = await start(config, logger);
  return -1;
}

/** `openapi [--out FILE]`: the document the service serves. */
export function runOpenApi(args: string[]): number {
  const document = `${JSON.stringify(apiDocument(), null, 2)}\n`;
  if (args.length === 0) process.stdout.write(document);
  else if (args.length === 2 && args[0] === '--out') writeFileSync(args[1], document);
  else throw new UsageError(`openapi takes --out FILE only, not ${args.join(' ')}`);
  return 0;
}
