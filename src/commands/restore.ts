import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createKeyFile } from '../application/key-files.js';
import { parseSecretKey } from '../application/secret-key.js';
import { type Config, loadConfig } from '../config.js';
import { recordStore } from '../data-dir.js';
import { CONFIG_STREAM } from '../domain/shared/types.js';
import { formatVerifier, parseSigner } from '../engine/signed-note.js';
import type { EventStore } from '../event-store/port.js';
import { LOG_KEY_FILE } from '../log/index.js';
import { openEventStore } from '../main.js';
import { type CheckedBackup, checkBackup } from './backup-manifest.js';
import { Refused, UsageError } from './catalog.js';
import { Progress } from './progress.js';

const BATCH = 1000;

/** Restores only into an empty DATA_DIR: no log, no read models, no key of another log. */
function emptyDataDir(config: Config): string {
  const dir = resolve(config.dataDir);
  if (existsSync(dir) && readdirSync(dir).some((name) => !name.startsWith('.'))) {
    throw new Refused(`DATA_DIR ${dir} is not empty: restore goes into a new or empty directory`);
  }
  return dir;
}

/**
 * The keys the restored service is to use: a key given in the environment must be the backup's (it is
 * then not written); otherwise it is written into DATA_DIR, mode 0600.
 */
function keysFor(config: Config, backup: CheckedBackup): { write: [string, string][] } {
  const write: [string, string][] = [];
  if (config.secretKey !== undefined) {
    if (!parseSecretKey(config.secretKey).equals(parseSecretKey(backup.secretKey)))
      throw new Refused("CONFIG_SECRET_KEY is not the backup's secret key: unset it, or set it to that key");
  } else write.push(['secret.key', `${backup.secretKey}\n`]);
  if (config.logSigningKey !== undefined) {
    if (formatVerifier(parseSigner(config.logSigningKey)) !== backup.manifest.public_key)
      throw new Refused("CONFIG_LOG_SIGNING_KEY is not the backup's log key: unset it, or set it to that key");
  } else write.push([LOG_KEY_FILE, `${backup.logKey}\n`]);
  if (backup.retired && config.retiredSecretKeys === undefined)
    write.push(['secret.key.retired', `${backup.retired}\n`]);
  return { write };
}

/** Appends the backup's events, in order, each batch at the revision it follows. */
async function append(store: EventStore, backup: CheckedBackup, progress: Progress): Promise<void> {
  const { events } = backup;
  for (let start = 0; start < events.length; start += BATCH) {
    const batch = events.slice(start, start + BATCH).map(({ type, data, metadata }) => ({ type, data, metadata }));
    await store.append(CONFIG_STREAM, batch, start === 0 ? 'no_stream' : start - 1);
    progress.update(Math.min(events.length, start + BATCH), events.length);
  }
}

/**
 * `restore --from DIR`: the backup checked whole first — every file's SHA-256, the events against the
 * signed checkpoint, the keys against the ones the log names — and refused before anything is
 * written; then its events appended into the configured store (which must hold none: a new SQLite
 * file, an empty MariaDB database, made if it does not exist), its keys written into the empty
 * DATA_DIR, and the store recorded. The restored service rebuilds its read models at its first start.
 */
export async function runRestore(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { from: { type: 'string' } } });
  if (!values.from) throw new UsageError('restore needs --from DIR (a directory `backup` wrote)');
  const config = loadConfig();
  const backup = checkBackup(resolve(values.from));
  const dir = emptyDataDir(config);
  const { write } = keysFor(config, backup);
  mkdirSync(dir, { recursive: true });
  const store = await openEventStore(config);
  try {
    if ((await store.readAll({ maxCount: 1 })).length > 0) {
      throw new Refused(`${store.name} already holds events: restore goes into an empty store`);
    }
    await append(store, backup, new Progress('restore'));
  } finally {
    await store.close();
  }
  for (const [name, content] of write) createKeyFile(join(dir, name), content);
  recordStore(config);
  console.log(`restored ${backup.events.length} events (checkpoint of size ${backup.manifest.events}) into ${dir}`);
  return 0;
}
