import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { promisify } from 'node:util';
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

/**
 * The private key must be unencrypted OpenSSH or PEM, and be the other half of the public key (its
 * public half has the same fingerprint; for RSA, its factors make the modulus). `provesItsPair`
 * then signs with it, off the event loop.
 */
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
  if (key.toPublic().fingerprint('sha256').toString() !== publicKey.fingerprint || !factorsHold(key)) {
    throw fieldError('private_key', 'key_mismatch', 'does not match public_key');
  }
}

/** A key's part as bytes (RSA's n, p, q big-endian; ED25519's seed k and public A). */
const partOf = (key: sshpk.PrivateKey, name: string): Buffer | undefined =>
  (key.part as unknown as Record<string, { data: Buffer } | undefined>)[name]?.data;

const numberOf = (key: sshpk.PrivateKey, name: string) => BigInt(`0x${partOf(key, name)?.toString('hex') || '0'}`);

/** RSA's factors multiply to its modulus (a pair made up around a public key has garbage ones). */
const factorsHold = (key: sshpk.PrivateKey) =>
  key.type !== 'rsa' || numberOf(key, 'p') * numberOf(key, 'q') === numberOf(key, 'n');

/** The private key as Node's crypto takes it: PKCS#8 for RSA, the 32-byte seed (as a JWK) for ED25519. */
function nodePrivateKey(key: sshpk.PrivateKey): KeyObject {
  if (key.type === 'rsa') return createPrivateKey(key.toString('pkcs8'));
  const base64url = (bytes: Buffer) => bytes.toString('base64url');
  const [seed, x] = [partOf(key, 'k')!.subarray(0, 32), partOf(key, 'A')!];
  return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: base64url(seed), x: base64url(x) }, format: 'jwk' });
}

const PROOF = Buffer.from('pmacontrol-config: a private key signs for its public key');
const signed = promisify(sign);

/**
 * Whether the private key really is its public half's pair, not parts made up around a public key
 * (garbage d, p, q beside a real modulus; an ED25519 public key beside a random seed): a signature
 * made with it verifies with the public key. Signing is done in libuv's thread pool: it takes about
 * a second of CPU for a 16,384-bit key. A key that does not parse is the synchronous check's to refuse.
 */
export async function provesItsPair(privateText: string): Promise<boolean> {
  let key: sshpk.PrivateKey;
  try {
    key = sshpk.parsePrivateKey(privateText, 'auto');
  } catch {
    return true;
  }
  try {
    const digest = key.type === 'rsa' ? 'sha256' : null;
    const signature = await signed(digest, PROOF, nodePrivateKey(key));
    return verify(digest, PROOF, createPublicKey(key.toPublic().toString('pkcs8')), signature);
  } catch {
    return false;
  }
}
