import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createKeyFile, readProtected, StartRefused } from '../application/service.js';
import type { RecordedLogKey } from '../domain/state.js';
import {
  formatSigner,
  formatVerifier,
  generateSigner,
  type NoteError,
  parseSigner,
  type SignerKey,
} from '../engine/signed-note.js';

/**
 * The key that signs the log's checkpoints (Ed25519, C2SP note form): `CONFIG_LOG_SIGNING_KEY`, else
 * `<dataDir>/log-signing.key` (mode 0600), made on the first start of a log that records none. Its
 * name is the log's origin, `pmacontrol-config/<log id>`. Every instance over one store signs with
 * the same key: one that differs from the key the log recorded is refused at start, as a lost one.
 */
export interface LogKeySource {
  fromEnv?: string;
  dataDir: string;
}

export const LOG_KEY_FILE = 'log-signing.key';

/** The name of a new log's key: the origin line of its checkpoints. */
const newOrigin = () => `pmacontrol-config/${randomBytes(8).toString('hex')}`;

/** A new signing key for a new log, as `log-key` prints it and log-signing.key holds it. */
export const newLogKey = (): string => formatSigner(generateSigner(newOrigin()));

function parse(text: string, origin: string): SignerKey {
  try {
    return parseSigner(text);
  } catch (error) {
    throw new StartRefused(`${origin} does not hold a log signing key: ${(error as NoteError).message}`);
  }
}

/** A new key in `file` (mode 0600), unless another instance starting together made it first. */
const generateKeyFile = (file: string): SignerKey => parse(createKeyFile(file, `${newLogKey()}\n`), file);

/** The signing key, checked against the public key the log recorded; made only when the log records none. */
export function openLogKey(source: LogKeySource, recorded: RecordedLogKey | undefined): SignerKey {
  const file = join(source.dataDir, LOG_KEY_FILE);
  let key: SignerKey;
  let origin: string;
  if (source.fromEnv) [key, origin] = [parse(source.fromEnv, 'CONFIG_LOG_SIGNING_KEY'), 'CONFIG_LOG_SIGNING_KEY'];
  else if (existsSync(file)) [key, origin] = [parse(readProtected(file), file), file];
  else if (recorded) {
    throw new StartRefused(
      [
        `${file} is missing, but the log's checkpoints are signed by ${recorded.verifierKey} (recorded ${recorded.at}).`,
        'Every instance over one log signs with the same key: copy log-signing.key from the DATA_DIR of an instance',
        'of this log (mode 0600), or set CONFIG_LOG_SIGNING_KEY to its content.',
      ].join('\n'),
    );
  } else [key, origin] = [generateKeyFile(file), file];
  if (recorded) assertLogKeyMatches(key, origin, recorded);
  return key;
}

/** Fails unless `key` is the one whose public half the log recorded. */
export function assertLogKeyMatches(key: SignerKey, origin: string, recorded: RecordedLogKey): void {
  const verifier = formatVerifier(key);
  if (verifier === recorded.verifierKey) return;
  throw new StartRefused(
    [
      `the log signing key from ${origin} (${verifier}) is not the one this log records`,
      `(${recorded.verifierKey}, recorded ${recorded.at}): checkpoints signed with it would not verify.`,
      'Start with the log key of this log: copy log-signing.key from another instance of it, or set CONFIG_LOG_SIGNING_KEY.',
    ].join('\n'),
  );
}
