import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SecretBox } from '../domain/shared/secrets.js';

const VERSION = 'v1';
const AAD = Buffer.from('pmacontrol-config/secret/v1');

/** AES-256-GCM; a sealed value is `v1:<iv>:<tag>:<ciphertext>`, base64 parts. The version leaves room for per-entry keys. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(AAD);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(
        ':',
      );
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(':');
      if (version !== VERSION || !iv || !tag || body === undefined)
        throw new Error('not a sealed value of this service');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64')).setAAD(AAD);
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/** `CONFIG_SECRET_KEY` as 64 hex digits or base64 of 32 bytes. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('CONFIG_SECRET_KEY must be 32 bytes, written as 64 hex digits or in base64');
  return key;
}

/** The key from the environment, else the one in `<dataDir>/secret.key`, created (mode 0600) on first start. */
export function loadSecretKey(dataDir: string, fromEnv?: string): Buffer {
  if (fromEnv) return parseSecretKey(fromEnv);
  const file = join(dataDir, 'secret.key');
  mkdirSync(dataDir, { recursive: true });
  const draft = `${file}.${process.pid}.tmp`;
  writeFileSync(draft, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  try {
    linkSync(draft, file); // atomic and exclusive: instances starting together agree on one key
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return parseSecretKey(readFileSync(file, 'utf8'));
}
