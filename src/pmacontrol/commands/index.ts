import { type Command, RUNS_ON_A_SERVED_DATA_DIR } from '../../commands/command.js';

/** PmaControl's commands, for the catalogue (commands/index.ts); each loads MariaDB's client only when run. */
export const pmacontrolCommands: Command[] = [
  {
    help: {
      name: 'import-pmacontrol',
      usage:
        'import-pmacontrol --from mysql://user:password@host:port/pmacontrol [--crypt-key-file FILE] [--dry-run] ' +
        '[--skip-invalid [--report FILE]]',
      summary: 'import an existing PmaControl inventory, ids kept, in one append',
      details:
        "Reads PmaControl's tables; --crypt-key-file is its crypt.config.php, to open its ciphertexts (passwords,\n" +
        'private and public keys). All or nothing: every problem is listed with its table and row id. With\n' +
        '--skip-invalid, every row the service accepts is imported and each row left out is listed with why\n' +
        '(--report FILE: the same as JSON). --dry-run checks and records nothing.\n' +
        RUNS_ON_A_SERVED_DATA_DIR,
    },
    run: async (args) => (await import('./import.js')).runImportPmaControl(args),
  },
  {
    help: {
      name: 'pmacontrol-ini',
      usage: 'pmacontrol-ini --out FILE [--watch] [--crypt-key-file FILE]',
      summary: "write PmaControl's connection file (db.config.ini.php) from the servers",
      details:
        "Writes FILE as PmaControl's generateMySQLConfig() writes configuration/db.config.ini.php: its header, then\n" +
        'a section per live server in id order, its password as PmaControl ciphertext, crypted=1. Soft-deleted\n' +
        "servers are left out (PmaControl's generator keeps them). Written through a file beside it and renamed, and\n" +
        'only when its content changes. --watch: again after every change that affects it, until SIGTERM or\n' +
        "SIGINT. PmaControl's key: --crypt-key-file or PMACONTROL_CRYPT_KEY_FILE.\n" +
        RUNS_ON_A_SERVED_DATA_DIR,
    },
    run: async (args) => (await import('./ini.js')).runPmaControlIni(args),
  },
];
