/**
 * What every command of `pmacontrol-config` says about itself: `pmacontrol-config --help` lists
 * them, `pmacontrol-config <command> --help` prints one, and docs/cli.md holds the same text (a test
 * compares them).
 */
/** A command line a command cannot take: exit 2, with the command's help. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** What a command was given cannot be done (a backup altered, a target not empty): exit 1, `refused: …`. */
export class Refused extends Error {
  override name = 'Refused';
}

export interface CommandHelp {
  name: string;
  /** The synopsis: the command and its options. */
  usage: string;
  /** One line for the list. */
  summary: string;
  /** What it does, its options, and what it needs. */
  details: string;
}

export const RUNS_ON_A_SERVED_DATA_DIR =
  'It runs with the configuration of the service (DATA_DIR, EVENT_STORE and its settings, CONFIG_SECRET_KEY),\n' +
  'also while the service runs, and refuses a DATA_DIR that does not exist, holds no store, or serves another\n' +
  'store than EVENT_STORE names.';

/** The core's commands; the wings bring theirs (see command.ts), and commands/index.ts lists them all. */
export const CORE_COMMANDS: CommandHelp[] = [
  {
    name: 'serve',
    usage: 'serve',
    summary: 'start the HTTP service',
    details:
      'Starts the service: the event store named by EVENT_STORE, the read models and keys in DATA_DIR (made\n' +
      'on the first start), HTTP on HOST:PORT. SIGTERM or SIGINT: not ready at once, serving for\n' +
      'SHUTDOWN_DRAIN_MS more, then every request in flight answered and exit 0.',
  },
  {
    name: 'replay',
    usage: 'replay [--apply]',
    summary: 'rebuild every read model from the log and compare it with the stored one',
    details:
      'Folds the whole log into a new read-model file beside the stored one and compares them row by row;\n' +
      'prints every difference and exits 1 if there is any. The stored read models are first folded up to\n' +
      'the head of the log as a start would: read models merely behind it (a stop, a kill -9) are not\n' +
      'different. --apply puts the rebuilt file in place of the stored one when they differ (being behind\n' +
      'included: it does not fold them first). Beside an instance serving DATA_DIR, --apply does not compare\n' +
      '(the stored file moves meanwhile): it leaves the rebuilt file beside the stored one, and the instance\n' +
      'takes it in at its next change-log question, or its next start, and catches it up with the log.\n' +
      'One replay at a time. A replay stopped before its end (killed, kill -9 included) leaves its file,\n' +
      'and the next one resumes it from its last consistent point (every 200,000 events at most).\n' +
      `${RUNS_ON_A_SERVED_DATA_DIR}`,
  },
  {
    name: 'openapi',
    usage: 'openapi [--out FILE]',
    summary: 'print the OpenAPI document (or write it to FILE)',
    details: 'The OpenAPI 3.1 document the service serves at /fr/api/openApi. It needs no configuration.',
  },
  {
    name: 'token',
    usage:
      'token create --name NAME --role reader|writer|admin [--expires-in 30d] [--secrets] [--break-glass]\n' +
      'token list [--json]\ntoken revoke ID',
    summary: 'issue, list and revoke bearer tokens',
    details:
      'create prints the new token alone on the last line of stdout, this once (the log keeps a sealed digest\n' +
      'of it). --secrets lets it read passwords and private keys; this command is the way to issue the first\n' +
      'such token. --break-glass lets it pass an approval policy alone with X-Break-Glass-Reason, each use\n' +
      'recorded (BreakGlassUsed); only this command issues one. list never shows a token. revoke: the token\n' +
      'answers 401 on every instance from then on.\n' +
      `${RUNS_ON_A_SERVED_DATA_DIR}`,
  },
  {
    name: 'export',
    usage: 'export [--at T] [--secrets sealed] [--out FILE]',
    summary: 'the whole configuration as one JSON document',
    details:
      'To stdout, or to FILE (mode 0600); --at: as it was at a date-time (ISO 8601 with an offset) or a\n' +
      'position; --secrets sealed: with each secret sealed under CONFIG_SECRET_KEY. Progress on stderr.\n' +
      `${RUNS_ON_A_SERVED_DATA_DIR}`,
  },
  {
    name: 'import',
    usage: 'import FILE [--dry-run]',
    summary: 'import such a document: all or nothing, every problem listed',
    details:
      'FILE, or - for stdin. Each entry is created, or replaced if its id exists, under the rules of POST and\n' +
      'PUT, in one append; any problem: exit 1, every problem on stderr, nothing recorded. --dry-run checks\n' +
      `and records nothing. The way for large imports (the HTTP route takes 64 MiB at most).\n${RUNS_ON_A_SERVED_DATA_DIR}`,
  },

  {
    name: 'backup',
    usage: 'backup --to DIR',
    summary: 'copy the log, its keys and a signed checkpoint into a directory, also while serving',
    details:
      'Reads the log up to its head (the log only grows: a consistent copy, also while the service writes) into\n' +
      'DIR/events.ndjson, with the secret key, the retired keys and the log signing key (mode 0600, DIR mode\n' +
      "0700: keep it as you keep DATA_DIR), and DIR/manifest.json: the store it came from, each file's SHA-256\n" +
      "and the log's checkpoint at that size, signed with its key. DIR must be new or empty.\n" +
      `${RUNS_ON_A_SERVED_DATA_DIR}`,
  },
  {
    name: 'restore',
    usage: 'restore --from DIR',
    summary: 'restore a backup into an empty DATA_DIR and an empty store',
    details:
      "Checks the backup whole before it writes anything: every file against the manifest's SHA-256, the events\n" +
      'against the signed checkpoint, the keys against the ones the log names. Then appends the events into the\n' +
      'store EVENT_STORE names (a new SQLite file in DATA_DIR; an empty MariaDB database, made if it does not\n' +
      'exist), writes the keys into DATA_DIR (or checks CONFIG_SECRET_KEY and CONFIG_LOG_SIGNING_KEY are the\n' +
      "backup's) and records the store. The service then starts on DATA_DIR, rebuilding its read models.",
  },
  {
    name: 'rotate-key',
    usage: 'rotate-key --new-key KEY',
    summary: 're-seal every secret under a new key, as events',
    details:
      'KEY: 64 hex digits or base64 of 32 bytes. The old key becomes a retired key (history and revert still\n' +
      'open what it sealed); instances on the old key serve reads and refuse writes until restarted.\n' +
      `${RUNS_ON_A_SERVED_DATA_DIR}`,
  },
  {
    name: 'copy-log',
    usage: 'copy-log --to sqlite:/path/events.sqlite | mysql://user:password@host:port/database',
    summary: 'copy the whole log of the configured store into an empty one',
    details:
      'Every event, in log order, with its time, actor and request; a target that holds any event is refused.\n' +
      `The log only grows: a copy made while the service writes is a consistent prefix (a backup).\n${RUNS_ON_A_SERVED_DATA_DIR}`,
  },
];

/** `pmacontrol-config --help`: every command of `helps`. */
export function overview(helps: readonly CommandHelp[]): string {
  const width = Math.max(...helps.map((c) => c.name.length)) + 2;
  const lines = helps.map((c) => `  ${c.name.padEnd(width)}${c.summary}`);
  return [
    'usage: pmacontrol-config <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'pmacontrol-config <command> --help    what a command does and its options',
    'pmacontrol-config --version           the release',
  ].join('\n');
}

/** `pmacontrol-config <command> --help`. */
export const commandHelp = (help: CommandHelp): string =>
  `usage: ${help.usage
    .split('\n')
    .map((line, i) => (i === 0 ? `pmacontrol-config ${line}` : `       pmacontrol-config ${line}`))
    .join('\n')}\n\n${help.summary}.\n\n${help.details}`;
