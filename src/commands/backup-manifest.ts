import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { keyFingerprint, parseSecretKey } from '../application/secret-key.js';
import type { StoreRecord } from '../data-dir.js';
import { CONFIG_STREAM } from '../domain/shared/types.js';
import { Frontier } from '../engine/merkle.js';
import { formatVerifier, openNote, parseCheckpoint, parseSigner, parseVerifier } from '../engine/signed-note.js';
import { logged, type RecordedEvent } from '../event-store/port.js';
import { LOG_KEY_FILE, leafOf } from '../log/index.js';
import { Refused } from './catalog.js';

/** What a backup directory holds, and how `restore` checks it before it writes anything. */

export const BACKUP_FORMAT = 'pmacontrol-config-backup/1';

export interface Manifest {
  format: string;
  created_at: string;
  /** The store it was taken from. */
  from: StoreRecord;
  events: number;
  /** The log's verifier key (C2SP note form), as GET /fr/api/log/public-key gives it. */
  public_key: string;
  /** The log's checkpoint at `events`, signed with the log's key. */
  checkpoint: string;
  files: { name: string; bytes: number; sha256: string }[];
}

/**
 * The keys of a backup are the ones its log names: the last SecretKeyRecorded's fingerprint is the
 * secret key's, the last LogKeyRecorded the log key's (a rotation during a backup is refused, its
 * keys would not open or sign the log they go with).
 */
export function recordedKeys(events: RecordedEvent[], secretHex: string, verifier: string): void {
  const last = (type: string) =>
    events.filter((event) => event.type === type).at(-1)?.data as Record<string, unknown> | undefined;
  const fingerprint = last('SecretKeyRecorded')?.fingerprint;
  if (fingerprint !== undefined && fingerprint !== keyFingerprint(parseSecretKey(secretHex))) {
    throw new Refused('the secret key is not the one the log names (a key rotation under way?): run it again');
  }
  const recorded = last('LogKeyRecorded')?.verifier_key;
  if (recorded !== undefined && recorded !== verifier) {
    throw new Refused('the log signing key is not the one the log records: run it with the key of this log');
  }
}

/** A backup read and checked whole: every file against the manifest, the events against the signed checkpoint. */
export interface CheckedBackup {
  manifest: Manifest;
  events: RecordedEvent[];
  secretKey: string;
  logKey: string;
  retired?: string;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Reads a backup directory and checks it; any problem is a Refused naming it, and nothing is written. */
export function checkBackup(dir: string): CheckedBackup {
  const manifestFile = join(dir, 'manifest.json');
  if (!existsSync(manifestFile)) throw new Refused(`${dir} holds no manifest.json: not a backup`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  if (manifest.format !== BACKUP_FORMAT) throw new Refused(`${dir}: unknown format ${String(manifest.format)}`);
  const read = (name: string): Buffer => {
    const listed = manifest.files.find((file) => file.name === name);
    if (!listed) throw new Refused(`the manifest lists no ${name}`);
    const path = join(dir, name);
    if (!existsSync(path) || statSync(path).size !== listed.bytes) throw new Refused(`${name}: missing or cut short`);
    const bytes = readFileSync(path);
    if (sha256(bytes) !== listed.sha256) throw new Refused(`${name}: its SHA-256 is not the manifest's`);
    return bytes;
  };
  const events = read('events.ndjson')
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line, i) => ({ ...(JSON.parse(line) as RecordedEvent), position: i + 1 }));
  const secretKey = read('secret.key').toString('utf8').trim();
  const logKey = read(LOG_KEY_FILE).toString('utf8').trim();
  const retired = manifest.files.some((file) => file.name === 'secret.key.retired')
    ? read('secret.key.retired').toString('utf8').trim()
    : undefined;
  checkLog(manifest, events, logKey);
  recordedKeys(events, secretKey, manifest.public_key);
  return { manifest, events, secretKey, logKey, ...(retired ? { retired } : {}) };
}

/** The events are the log the checkpoint signs: its size, its root, signed by the log's key. */
function checkLog(manifest: Manifest, events: RecordedEvent[], logKey: string): void {
  const verifier = formatVerifier(parseSigner(logKey));
  if (verifier !== manifest.public_key) throw new Refused('log-signing.key is not the key the manifest names');
  let checkpoint: ReturnType<typeof parseCheckpoint>;
  try {
    checkpoint = parseCheckpoint(openNote(manifest.checkpoint, parseVerifier(verifier)));
  } catch (error) {
    throw new Refused(`the manifest's checkpoint does not verify: ${(error as Error).message}`);
  }
  const tree = new Frontier();
  for (const event of events) {
    if (event.stream !== CONFIG_STREAM || event.revision !== tree.size) {
      throw new Refused(`events.ndjson: line ${tree.size + 1} is not the event of revision ${tree.size}`);
    }
    tree.append(leafOf(logged(event)));
  }
  if (checkpoint.size !== events.length || !checkpoint.root.equals(tree.root())) {
    throw new Refused(
      `events.ndjson (${events.length} events) is not the log its signed checkpoint names (size ${checkpoint.size})`,
    );
  }
}
