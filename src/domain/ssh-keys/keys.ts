import { createHash } from 'node:crypto';
import sshpk from 'sshpk';
import { fieldError } from '../shared/errors.js';

export type SshKeyType = 'ED25519' | 'RSA';

export interface PublicKeyFacts {
  type: SshKeyType;
  bit: number;
  /** `SHA256:<base64>`, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** PmaControl's legacy form: SHA-1 of the key text minus its first 8 characters, upper-case hex. */
  legacyFingerprint: string;
  comment: string;
}

const TYPES: Record<string, SshKeyType> = { ed25519: 'ED25519', rsa: 'RSA' };
export const MIN_RSA_BITS = 2048;
/** Larger keys are not in use anywhere; a fabricated huge modulus would only cost work. */
export const MAX_RSA_BITS = 16384;

/** Reads one OpenSSH public key line; only ED25519 and RSA of at least 2048 bits are accepted. */
export function analysePublicKey(text: string): PublicKeyFacts {
  if (/[\r\n]/.test(text)) throw fieldError('public_key', 'invalid_format', 'must be a single OpenSSH public key line');
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(text, 'ssh');
  } catch {
    throw fieldError('public_key', 'invalid_format', 'is not an OpenSSH public key (ssh-ed25519 … or ssh-rsa …)');
  }
  const type = TYPES[key.type];
  if (!type)
    throw fieldError('public_key', 'unsupported_key_type', `${key.type} keys are not supported; use ED25519 or RSA`);
  if (type === 'RSA' && key.size < MIN_RSA_BITS) {
    throw fieldError(
      'public_key',
      'key_too_weak',
      `RSA keys need at least ${MIN_RSA_BITS} bits, this one has ${key.size}`,
    );
  }
  if (type === 'RSA' && key.size > MAX_RSA_BITS) {
    throw fieldError(
      'public_key',
      'key_too_large',
      `RSA keys can have at most ${MAX_RSA_BITS} bits, this one has ${key.size}`,
    );
  }
  return {
    type,
    bit: key.size,
    fingerprint: key.fingerprint('sha256').toString(),
    legacyFingerprint: createHash('sha1').update(text.slice(8)).digest('hex').toUpperCase(),
    comment: typeof key.comment === 'string' && key.comment !== '(unnamed)' ? key.comment : '',
  };
}

/** The private key must be unencrypted OpenSSH or PEM, and be the other half of the public key. */
export function assertPrivateKeyMatches(privateText: string, publicKey: PublicKeyFacts): void {
  let key: sshpk.PrivateKey;
  try {
    key = sshpk.parsePrivateKey(privateText, 'auto');
  } catch (error) {
    if ((error as Error).name === 'KeyEncryptedError') {
      throw fieldError(
        'private_key',
        'encrypted_key',
        'is protected by a passphrase; send it unencrypted (it is encrypted at rest here)',
      );
    }
    throw fieldError('private_key', 'invalid_format', 'is not an OpenSSH or PEM private key');
  }
  if (key.toPublic().fingerprint('sha256').toString() !== publicKey.fingerprint) {
    throw fieldError('private_key', 'key_mismatch', 'does not match public_key');
  }
}
