import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readProtected } from '../application/key-files.js';
import { parseSecretKey } from '../application/secret-key.js';
import type { Config } from '../config.js';
import { loadConfig } from '../config.js';
import { assertServes, storeOf } from '../data-dir.js';
import { CONFIG_STREAM } from '../domain/shared/types.js';
import { Frontier } from '../engine/merkle.js';
import { checkpointText, formatVerifier, parseSigner, signNote } from '../engine/signed-note.js';
import { logged, type RecordedEvent } from '../event-store/port.js';
import { LOG_KEY_FILE, leafOf } from '../log/index.js';
import { openLogReader } from '../main.js';
import { BACKUP_FORMAT, type Manifest, recordedKeys } from './backup-manifest.js';
import { Refused, UsageError } from './catalog.js';
import { Progress } from './progress.js';

const BATCH = 5000;

/** A file of the backup written and synced, mode 0600; its name, size and SHA-256 for the manifest. */
function writeFile(dir: string, name: string, content: string) {
  const fd = openSync(join(dir, name), 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const bytes = Buffer.from(content);
  return { name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The keys of the configuration, as they are read at start (never made: a backup makes nothing). */
function keysOf(config: Config) {
  const secretFile = join(config.dataDir, 'secret.key');
  const logFile = join(config.dataDir, LOG_KEY_FILE);
  const secret = config.secretKey ?? (existsSync(secretFile) ? readProtected(secretFile) : undefined);
  const log = config.logSigningKey ?? (existsSync(logFile) ? readProtected(logFile) : undefined);
  if (!secret) throw new Refused(`no secret key: ${secretFile} is missing and CONFIG_SECRET_KEY is not set`);
  if (!log) throw new Refused(`no log signing key: ${logFile} is missing and CONFIG_LOG_SIGNING_KEY is not set`);
  const retiredFile = join(config.dataDir, 'secret.key.retired');
  const retired =
    config.retiredSecretKeys?.split(',').join('\n') ?? (existsSync(retiredFile) ? readProtected(retiredFile) : '');
  return { secret: parseSecretKey(secret).toString('hex'), log: log.trim(), retired: retired.trim() };
}

/** A directory to write the backup into: new, or empty; made mode 0700. */
function emptyDirectory(dir: string): string {
  const path = resolve(dir);
  if (existsSync(path) && readdirSync(path).length > 0) throw new Refused(`${path} is not empty`);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  return path;
}

/**
 * The log read up to its head, in order: each event as a line of events.ndjson, its tree, and the
 * events that name the keys. A log with a gap is refused (verify says where).
 */
async function readLog(config: Config) {
  const reader = (await openLogReader(config))!;
  const progress = new Progress('backup');
  const tree = new Frontier();
  const lines: string[] = [];
  const events: RecordedEvent[] = [];
  try {
    for (let after = 0; ; ) {
      const batch = await reader.read(after, BATCH);
      for (const recorded of batch) {
        after = recorded.position;
        if (recorded.stream !== CONFIG_STREAM) continue;
        if (recorded.revision !== tree.size) {
          throw new Refused(`the log has a gap at position ${tree.size + 1}: run verify before a backup`);
        }
        tree.append(leafOf(logged(recorded)));
        const { stream, revision, type, data, metadata } = recorded;
        lines.push(JSON.stringify({ stream, revision, type, data, metadata }));
        if (recorded.type === 'SecretKeyRecorded' || recorded.type === 'LogKeyRecorded') events.push(recorded);
      }
      progress.update(tree.size, tree.size);
      if (batch.length < BATCH) break;
    }
  } finally {
    await reader.close();
  }
  return { tree, lines, events };
}

/**
 * `backup --to DIR`: the log read up to its head at the start (the log only grows: a consistent
 * prefix, also while the service writes), written as NDJSON, with the keys that serve it again and a
 * manifest of every file's SHA-256 and the log's checkpoint at that size, signed with its key.
 */
export async function runBackup(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { to: { type: 'string' } } });
  if (!values.to) throw new UsageError('backup needs --to DIR (a new or empty directory)');
  const config = loadConfig();
  assertServes(config);
  const keys = keysOf(config);
  const dir = emptyDirectory(values.to);
  const { tree, lines, events } = await readLog(config);
  const signer = parseSigner(keys.log);
  recordedKeys(events, keys.secret, formatVerifier(signer)); // a rotation during the backup is refused
  const checkpoint = signNote(checkpointText({ origin: signer.name, size: tree.size, root: tree.root() }), signer);
  const files = [
    writeFile(dir, 'events.ndjson', lines.length > 0 ? `${lines.join('\n')}\n` : ''),
    writeFile(dir, 'secret.key', `${keys.secret}\n`),
    writeFile(dir, LOG_KEY_FILE, `${keys.log}\n`),
    ...(keys.retired ? [writeFile(dir, 'secret.key.retired', `${keys.retired}\n`)] : []),
  ];
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    created_at: new Date().toISOString(),
    from: storeOf(config),
    events: tree.size,
    public_key: formatVerifier(signer),
    checkpoint,
    files,
  };
  writeFile(dir, 'manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
  fsyncSync(openSync(dir, 'r'));
  console.log(`backed up ${tree.size} events into ${dir}`);
  return 0;
}
