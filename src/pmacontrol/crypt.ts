import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { deflateSync, inflateSync } from 'node:zlib';

/**
 * Opens and makes the ciphertexts PmaControl stores and sends (`is_password_crypted`): its `Chiffrement::encrypt`
 * calls its framework's `Crypt::encrypt($value, CRYPT_KEY)`, which
 *
 * 1. PHP-serialises the value and compresses it with `gzcompress` (a zlib stream),
 * 2. encrypts it with AES-256-CBC under a key derived from `CRYPT_KEY`:
 *    `substr(base64_encode(base64_encode(md5(K, true) . md5(K, true))), 20, 32)`, 32 printable bytes,
 * 3. appends the 16-byte IV after the ciphertext,
 * 4. base64-encodes the whole and makes it URL-safe with `strtr('+/=', '-_,')`.
 *
 * The framework first padded with zero bytes (mcrypt); its PHP 7+ port pads as OpenSSL does (PKCS#7).
 * Both are opened here. Only a serialised string is accepted: a password or a key is a string. What
 * this makes is padded as OpenSSL pads, with a random IV.
 */
export interface PmaControlCrypt {
  /** The plain text, or a PmaControlCryptError saying why the value does not open. */
  decrypt(ciphertext: string): string;
  /** The value as PmaControl's `Chiffrement::encrypt` makes it. */
  encrypt(plain: string): string;
}

export class PmaControlCryptError extends Error {
  override name = 'PmaControlCryptError';
}

/** The key PmaControl derives from CRYPT_KEY (its `keygen`). */
export function derivedKey(cryptKey: Buffer): Buffer {
  const md5 = createHash('md5').update(cryptKey).digest();
  const twice = Buffer.from(Buffer.concat([md5, md5]).toString('base64')).toString('base64');
  return Buffer.from(twice.slice(20, 52), 'latin1');
}

export function createPmaControlCrypt(cryptKey: Buffer): PmaControlCrypt {
  if (cryptKey.length === 0) throw new PmaControlCryptError('the PmaControl CRYPT_KEY is empty');
  const key = derivedKey(cryptKey);
  return {
    decrypt(ciphertext) {
      const plain = inflate(decipher(key, ciphertext));
      return unserializeString(plain);
    },
    encrypt(plain) {
      const iv = randomBytes(16);
      const cipher = createCipheriv('aes-256-cbc', key, iv);
      const encrypted = Buffer.concat([cipher.update(compressed(plain)), cipher.final(), iv]);
      return encrypted.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, ',');
    },
  };
}

/** The value PHP-serialised as a string, then compressed as `gzcompress` does: what is encrypted. */
function compressed(plain: string): Buffer {
  const value = Buffer.from(plain, 'utf8');
  return deflateSync(Buffer.concat([Buffer.from(`s:${value.length}:"`, 'latin1'), value, Buffer.from('";')]));
}

/**
 * How many characters PmaControl's ciphertext of `plain` takes (the same under any key, any IV):
 * what must fit in the column that keeps it.
 */
export function ciphertextLength(plain: string): number {
  return base64Length(compressed(plain).length);
}

/**
 * The most characters `plain`'s ciphertext can take, without compressing it: zlib's compressBound
 * of its bytes (bench/pmacontrol.ts: compressing every password of every write to check a column's
 * room cost a tenth of the write path; the bound settles all but values near the column's length).
 */
export function ciphertextBound(plain: string): number {
  const bytes = Buffer.byteLength(plain, 'utf8');
  const n = bytes + String(bytes).length + 6; // PHP-serialised: s:<bytes>:"…";
  return base64Length(n + (n >> 12) + (n >> 14) + (n >> 25) + 13);
}

/** Base64 of the IV and the AES-CBC blocks of `length` bytes (PKCS#7 always adds a block's padding). */
const base64Length = (length: number) => Math.ceil(((Math.floor(length / 16) + 1) * 16 + 16) / 3) * 4;

/**
 * Reads PMACONTROL_CRYPT_KEY_FILE: PmaControl's `configuration/crypt.config.php` (the value given to
 * `define('CRYPT_KEY', '…')`, with PHP's quoting rules), or a file that holds the key alone (one
 * trailing line break is not part of it).
 */
export function readPmaControlCryptKey(path: string): Buffer {
  const text = readFileSync(path);
  const source = text.toString('latin1');
  if (!/\bdefine\s*\(/.test(source)) return Buffer.from(source.replace(/\r?\n$/, ''), 'latin1');
  const match = /define\s*\(\s*(['"])CRYPT_KEY\1\s*,\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*\)/s.exec(source);
  if (!match) throw new PmaControlCryptError(`${path} has no define('CRYPT_KEY', '…') that can be read`);
  const value = match[2] !== undefined ? match[2].replace(/\\([\\'])/g, '$1') : match[3]!.replace(/\\([\\"$])/g, '$1');
  return Buffer.from(value, 'latin1');
}

function decipher(key: Buffer, ciphertext: string): Buffer {
  if (!/^[A-Za-z0-9\-_,+/=\s]+$/.test(ciphertext)) throw new PmaControlCryptError('is not PmaControl ciphertext');
  const data = Buffer.from(ciphertext.replace(/-/g, '+').replace(/_/g, '/').replace(/,/g, '='), 'base64');
  if (data.length < 32 || data.length % 16 !== 0) throw new PmaControlCryptError('is not PmaControl ciphertext');
  const iv = data.subarray(data.length - 16);
  const cipher = createDecipheriv('aes-256-cbc', key, iv).setAutoPadding(false);
  const padded = Buffer.concat([cipher.update(data.subarray(0, data.length - 16)), cipher.final()]);
  return unpad(padded);
}

/** PKCS#7 when the last bytes say so, else the zero bytes mcrypt added (the zlib stream ends itself). */
function unpad(padded: Buffer): Buffer {
  const n = padded[padded.length - 1]!;
  if (n >= 1 && n <= 16 && padded.subarray(padded.length - n).every((byte) => byte === n)) {
    return padded.subarray(0, padded.length - n);
  }
  return padded;
}

function inflate(compressed: Buffer): Buffer {
  try {
    return inflateSync(compressed);
  } catch {
    throw new PmaControlCryptError('does not decrypt with the PmaControl key');
  }
}

/** PHP's `s:<bytes>:"<value>";`, nothing else. */
function unserializeString(serialized: Buffer): string {
  const head = /^s:(\d+):"/.exec(serialized.subarray(0, 24).toString('latin1'));
  if (!head) throw new PmaControlCryptError('decrypts to something other than a string');
  const start = head[0].length;
  const end = start + Number(head[1]);
  if (serialized.subarray(end).toString('latin1') !== '";') {
    throw new PmaControlCryptError('decrypts to a malformed PHP string');
  }
  return serialized.subarray(start, end).toString('utf8');
}
