import { type Command, RUNS_ON_A_SERVED_DATA_DIR, UsageError } from '../../commands/command.js';
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
      usage: 'verify [--checkpoint FILE]...',
      summary: 'check the log against its Merkle tree and the checkpoints kept',
      details:
        'Reads every event from the store (not through the service), makes every leaf and the Merkle tree again,\n' +
        "and checks each checkpoint FILE (a signed note an auditor kept) and the service's latest (its read\n" +
        "models): signed by the log key, and its root the root of the log's first events. Exit 0 when all\n" +
        'hold; else exit 1, naming the checkpoint that fails and the first position that differs. Progress on\n' +
        `stderr.\n${RUNS_ON_A_SERVED_DATA_DIR}`,
    },
    // The store's client is loaded only when run (a tenth of a second that the other commands do not need).
    run: async (args) => (await import('./verify.js')).runVerify(args),
  },
];
