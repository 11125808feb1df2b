import { pino } from 'pino';
import type { ConfigService } from '../application/service.js';
import type { ImportCounts } from '../application/transfer.js';
import { type Config, loadConfig } from '../config.js';
import { DomainError, ValidationFailed } from '../domain/shared/errors.js';
import { openService } from '../main.js';

/**
 * Runs a command on the service started from the environment's configuration (same store, same key)
 * without HTTP: it follows the log like any instance, writes through the same deciders, and stops.
 * Logs go to stderr (stdout is the command's answer). A refusal prints why, every problem of a 422
 * with its field, and exits 1.
 */
export async function withCliService(work: (service: ConfigService, config: Config) => Promise<number>) {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }, pino.destination(2));
  const { service, close } = await openService(config, logger);
  try {
    return await work(service, config);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (!(error instanceof ValidationFailed)) console.error(`refused: ${error.message}`);
    else {
      console.error(`refused: ${error.errors.length} problems`);
      for (const e of error.errors) console.error(`  ${e.field}: ${e.message} (${e.code})`);
    }
    return 1;
  } finally {
    await close();
  }
}

/** The line an import ends with. */
export const countsLine = (counts: ImportCounts, dryRun: boolean) =>
  `${counts.created} created, ${counts.updated} updated, ${counts.unchanged} unchanged (${dryRun ? 'would be' : 'were'} recorded)`;
