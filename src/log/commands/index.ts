import { type Command, UsageError } from '../../commands/command.js';
import { newLogKey } from '../key.js';

/** The verifiable log's commands, for the catalogue (commands/index.ts). */
export const logCommands: Command[] = [
  {
    help: {
      name: 'log-key',
      usage: 'log-key',
      summary: 'print a new key to sign the log with, for CONFIG_LOG_SIGNING_KEY',
      details:
        'An Ed25519 signer key in C2SP note form, named pmacontrol-config/<a new log id>, on stdout. Give the\n' +
        'same one to every instance of a new log as CONFIG_LOG_SIGNING_KEY (or as DATA_DIR/log-signing.key,\n' +
        'mode 0600); without one, the first start makes the file. It needs no configuration.',
    },
    run: (args) => {
      if (args.length > 0) throw new UsageError(`log-key takes no argument, not ${args.join(' ')}`);
      console.log(newLogKey());
      return 0;
    },
  },
  {
    help: {
      name: 'verify',
      usage:
        'verify [--checkpoint FILE]... [--from sqlite:FILE | mysql://user:password@host:port/database] [--public-key FILE]',
      summary: 'check the log against its Merkle tree and the checkpoints kept',
      details:
        'Reads every event in the order of its stored positions, writing nothing (not through the service), makes\n' +
        'every leaf and the Merkle tree again, and checks each checkpoint FILE (a signed note an auditor kept)\n' +
        "and, on the service's own store, its latest (its read models): signed by the log key, and its root the\n" +
        "root of the log's first events. --from reads a copy instead (a backup restored into another file or\n" +
        'database): DATA_DIR and EVENT_STORE are then not needed. The key: --public-key FILE (the note\n' +
        'GET /fr/api/log/public-key gives), else the signing key of DATA_DIR or CONFIG_LOG_SIGNING_KEY, else the\n' +
        'one the log records (said so: a writer of the store could have replaced it). Exit 0 when all hold; else\n' +
        'exit 1, naming the checkpoint that fails and the first position that differs (an event changed,\n' +
        'removed, inserted or moved, or one that cannot be read). Progress on stderr.',
    },
    // The store's client is loaded only when run (a tenth of a second that the other commands do not need).
    run: async (args) => (await import('./verify.js')).runVerify(args),
  },
];
