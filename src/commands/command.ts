/**
 * The plug point for commands: a wing brings its commands as `{ help, run }` (src/<wing>/commands/),
 * and `commands/index.ts` puts them in the catalogue beside the core's. What a command needs of the
 * composition root — the configuration, the store, the service without HTTP — is exported here.
 */
import type { ConfigService } from '../application/service.js';
import { importInto, parseImportDocument } from '../http/import-document.js';
import { WriteValidator } from '../schemas/validator.js';
import type { CommandHelp } from './catalog.js';

export interface Command {
  help: CommandHelp;
  /** The command's work: its exit code, or -1 while it keeps running. */
  run(args: string[]): Promise<number> | number;
  /** It folds the whole log: it runs in a thread with a larger young generation (see src/cli.ts). */
  foldsLog?: boolean;
}

export type { ImportCounts } from '../application/transfer.js';
export { type Config, loadConfig } from '../config.js';
export { assertServes } from '../data-dir.js';
export type { LogReader } from '../event-store/port.js';
export { EventUnreadable } from '../event-store/port.js';
export { openEventStore, openLogReader, readModelsFile } from '../main.js';
export { default as Database } from '../sqlite/driver.js';
export { type CommandHelp, RUNS_ON_A_SERVED_DATA_DIR, UsageError } from './catalog.js';
export { countsLine, withCliService } from './cli-service.js';
export { Progress } from './progress.js';

/** An import document read for `service`: its entries checked as POST and PUT would, and its problems. */
export const readImportDocument = (service: ConfigService, document: Record<string, unknown>) =>
  parseImportDocument(document, importInto(service, new WriteValidator()));
