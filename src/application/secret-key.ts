import { createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESOURCE_NAMES, resourceOf } from '../domain/resources.js';
import { DomainError } from '../domain/shared/errors.js';
import type { Sealed } from '../domain/shared/fields.js';
import type { ConfigState } from '../domain/state.js';
import { createKeyFile, readProtected } from './key-files.js';
import { StartRefused } from './start-refused.js';

/**
 * Where the key comes from: `CONFIG_SECRET_KEY`, else `<dataDir>/secret.key`; and the keys retired
 * by rotations (values sealed before a rotation, in history and time travel, open with them):
 * `CONFIG_RETIRED_SECRET_KEYS`, else `<dataDir>/secret.key.retired`.
 */
export interface KeySource {
  fromEnv?: string;
  retiredFromEnv?: string;
  dataDir: string;
}

/** This instance's key is no longer the one the log names: it serves reads, and refuses writes. */
export class KeyRotated extends DomainError {
  constructor() {
    super(
      503,
      'unavailable',
      'the secret key was rotated: this instance serves reads only until it is restarted with the new key ' +
        '(CONFIG_SECRET_KEY or secret.key) and the old one among the retired keys; nothing was written',
    );
  }
}

/** The fingerprint recorded in the log: it identifies the key and reveals nothing of it. */
export interface RecordedKey {
  fingerprint: string;
  at: string;
}

/** HMAC-SHA-256 of a fixed label under the key, 128 bits in hex. */
export const keyFingerprint = (key: Buffer): string =>
  createHmac('sha256', key).update('pmacontrol-config/key-fingerprint/v1').digest('hex').slice(0, 32);

/** `CONFIG_SECRET_KEY` as 64 hex digits or base64 of 32 bytes. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32)
    throw new StartRefused('CONFIG_SECRET_KEY must be 32 bytes, written as 64 hex digits or in base64');
  return key;
}

const keyFile = (dataDir: string) => join(dataDir, 'secret.key');
const retiredFile = (dataDir: string) => join(dataDir, 'secret.key.retired');

/** The retired keys: CONFIG_RETIRED_SECRET_KEYS (comma-separated), else secret.key.retired (one a line). */
export function openRetiredKeys(source: KeySource): Buffer[] {
  const file = retiredFile(source.dataDir);
  const text = source.retiredFromEnv ?? (existsSync(file) ? readProtected(file) : '');
  return text
    .split(/[,\s]+/)
    .filter(Boolean)
    .map((k) => parseSecretKey(k));
}

/**
 * After a rotation recorded in the log, for a DATA_DIR that keeps its key in secret.key: the old key
 * is added to secret.key.retired, then the new key replaces secret.key (written aside, then renamed:
 * a crash leaves the old file or the new one, never half of one). Both files are mode 0600.
 */
export function saveRotatedKeys(dataDir: string, old: Buffer, next: Buffer): void {
  appendFileSync(retiredFile(dataDir), `${old.toString('hex')}\n`, { mode: 0o600 });
  const draft = `${keyFile(dataDir)}.${process.pid}.tmp`;
  writeFileSync(draft, `${next.toString('hex')}\n`, { mode: 0o600 });
  renameSync(draft, keyFile(dataDir));
}

/**
 * The key, checked against the fingerprint the log recorded. A key is generated (into
 * `secret.key`, mode 0600) only when the log has none recorded: a lost key is never silently
 * replaced, since every secret sealed under it would become unreadable.
 */
export function openSecretKey(source: KeySource, recorded: RecordedKey | undefined): Buffer {
  const file = keyFile(source.dataDir);
  const [key, origin] = source.fromEnv
    ? [parseSecretKey(source.fromEnv), 'CONFIG_SECRET_KEY']
    : existsSync(file)
      ? [readKeyFile(file), file]
      : [missingKey(file, recorded), file];
  if (recorded) assertMatches(key, origin, recorded);
  return key;
}

/** Fails unless `key` is the one recorded. */
export function assertMatches(key: Buffer, origin: string, recorded: RecordedKey): void {
  const fingerprint = keyFingerprint(key);
  if (fingerprint === recorded.fingerprint) return;
  throw new StartRefused(
    [
      `the key from ${origin} (fingerprint ${fingerprint}) does not match the key the data was sealed under`,
      `(fingerprint ${recorded.fingerprint}, recorded ${recorded.at}). Its secrets cannot be opened with another key.`,
      'Start with the original key: restore secret.key from a backup of this DATA_DIR, or set CONFIG_SECRET_KEY to it.',
    ].join('\n'),
  );
}

function readKeyFile(file: string): Buffer {
  const text = readProtected(file);
  try {
    return parseSecretKey(text);
  } catch (error) {
    throw new StartRefused(`${file} does not hold a key: ${(error as Error).message}`);
  }
}

function missingKey(file: string, recorded: RecordedKey | undefined): Buffer {
  if (recorded) {
    throw new StartRefused(
      [
        `${file} is missing, but the data here was sealed under the key with fingerprint ${recorded.fingerprint}`,
        `(recorded ${recorded.at}). A new key would make every stored password and private key unreadable.`,
        'Restore secret.key from a backup of this DATA_DIR (mode 0600), or set CONFIG_SECRET_KEY to the original key.',
      ].join('\n'),
    );
  }
  return generateKeyFile(file);
}

/** A new key in `file` (mode 0600), unless another instance starting together made it first. */
function generateKeyFile(file: string): Buffer {
  createKeyFile(file, `${randomBytes(32).toString('hex')}\n`);
  return readKeyFile(file);
}

/** Any sealed secret the configuration holds, whatever resource declares it. */
export function firstSecret(state: ConfigState): Sealed | undefined {
  for (const name of RESOURCE_NAMES) {
    const { secretFields } = resourceOf(name);
    if (secretFields.length === 0) continue;
    for (const entry of state.collections[name].values()) {
      const field = secretFields.find((f) => typeof entry[f] === 'string');
      if (field) return entry[field] as Sealed;
    }
  }
  return undefined;
}
