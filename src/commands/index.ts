import { logCommands } from '../log/commands/index.js';
import { pmacontrolCommands } from '../pmacontrol/commands/index.js';
import { CORE_COMMANDS, type CommandHelp } from './catalog.js';
import type { Command } from './command.js';
import { runReplay } from './replay.js';
import { runRotateKey } from './rotate-key.js';
import { runOpenApi, runServe } from './serve.js';
import { runToken } from './token.js';
import { runExport, runImport } from './transfer.js';

/**
 * Each core command's work. The commands that read MariaDB are loaded only when run: their client
 * takes a tenth of a second to load, which `serve` does not need.
 */
const CORE_RUN: Record<string, Command['run']> = {
  serve: runServe,
  replay: runReplay,
  openapi: runOpenApi,
  token: runToken,
  export: runExport,
  import: runImport,
  'rotate-key': runRotateKey,
  backup: async (args) => (await import('./backup.js')).runBackup(args),
  restore: async (args) => (await import('./restore.js')).runRestore(args),
  'copy-log': async (args) => (await import('./copy-log.js')).runCopyLog(args),
};

/** The core commands that fold the whole log (see Command.foldsLog). */
const FOLD_THE_LOG = new Set(['replay']);

/** The catalogue: the core's commands, then each wing's. `pmacontrol-config --help` lists them in this order. */
export const COMMANDS: readonly Command[] = [
  ...CORE_COMMANDS.map((help) => ({ help, run: CORE_RUN[help.name], foldsLog: FOLD_THE_LOG.has(help.name) })),
  ...logCommands,
  ...pmacontrolCommands,
];

export const HELPS: readonly CommandHelp[] = COMMANDS.map((command) => command.help);

export const commandOf = (name: string): Command | undefined => COMMANDS.find((command) => command.help.name === name);
