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
      usage: 'pmacontrol-ini --out FILE [--watch] [--mode MODE] [--crypt-key-file FILE]',
      summary: "write PmaControl's connection file (db.config.ini.php) from the servers",
      details:
        "Writes FILE as PmaControl's generateMySQLConfig() writes configuration/db.config.ini.php: its header, then\n" +
        'a section per live server in id order, its password as PmaControl ciphertext, crypted=1. Soft-deleted\n' +
        "servers are left out (PmaControl's generator keeps them). Every section name and value is double-quoted and\n" +
        "escaped as PHP's parse_ini_file reads it back (a quote, a semicolon, a newline or a $variable in a name injects\n" +
        "nothing). Its sections sit between two comment lines; every other section of FILE (the installer's\n" +
        '[pmacontrol]) is kept, and a server named as one of them is refused. Written through a file made\n' +
        'exclusively beside FILE and renamed, and only when its content changes; a symbolic link is followed (its\n' +
        'target is replaced). A new file gets MODE (0640); a replaced one keeps its mode and owner. --watch: again\n' +
        "after every change that affects it, until SIGTERM or SIGINT. PmaControl's key: --crypt-key-file or\n" +
        'PMACONTROL_CRYPT_KEY_FILE.\n' +
        RUNS_ON_A_SERVED_DATA_DIR,
    },
    run: async (args) => (await import('./ini.js')).runPmaControlIni(args),
  },
  {
    help: {
      name: 'pmacontrol-check',
      usage: 'pmacontrol-check [--json]',
      summary: "list what PmaControl's tables could not store, before its projection starts",
      details:
        "Lists every value of the inventory that PmaControl's columns cannot hold — a character outside latin1\n" +
        '(tags, clients, environments, SSH keys), outside utf8mb3 (a server name), more characters than the column\n' +
        "has, an integer past INT, a password whose ciphertext is too long — and every two names PmaControl's\n" +
        'collation takes for one (latin1_swedish_ci weighs Ü as Y). Exit 1 if there is any. While PMACONTROL_DB_URL\n' +
        'is configured, such writes are refused at the API (422, or 409 for a name).\n' +
        RUNS_ON_A_SERVED_DATA_DIR,
    },
    run: async (args) => (await import('./check.js')).runPmaControlCheck(args),
  },
];
