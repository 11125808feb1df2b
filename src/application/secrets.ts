import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { Sealed } from '../domain/shared/fields.js';
import { pooledRandom } from './random.js';

/** Seals and opens secret values: the only place that sees both the key and the plain text. */
export interface SecretBox {
  seal(plain: string): Sealed;
  open(sealed: Sealed): string;
  /** The plain text, or undefined when the value was sealed under another key or is not a sealed value. */
  tryOpen(sealed: Sealed): string | undefined;
}

const VERSION = 'v1';
const AAD = Buffer.from('pmacontrol-config/secret/v1');

function openWith(key: Buffer, sealed: Sealed): string {
  const [version, iv, tag, body] = sealed.split(':');
  if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('not a sealed value of this service');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64')).setAAD(AAD);
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
}

/**
 * AES-256-GCM; a sealed value is `v1:<iv>:<tag>:<ciphertext>`, base64 parts. Values are sealed under
 * `key`; they are opened with it or, for values sealed before a key rotation, with one of the
 * `retired` keys (GCM's tag tells which key a value was sealed under).
 */
export function createSecretBox(key: Buffer, retired: readonly Buffer[] = []): SecretBox {
  if (key.length !== 32 || retired.some((k) => k.length !== 32)) throw new Error('a secret key must be 32 bytes');
  // A fresh random IV per seal, from a pool refilled every 341 seals (4 KiB).
  const nextIv = pooledRandom(12, 341);
  const open = (sealed: Sealed) => {
    try {
      return openWith(key, sealed);
    } catch (error) {
      for (const old of retired) {
        try {
          return openWith(old, sealed);
        } catch {
          // not this one either
        }
      }
      throw error;
    }
  };
  return {
    seal(plain) {
      const iv = nextIv();
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(AAD);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const parts = [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')];
      return parts.join(':') as Sealed;
    },
    open,
    tryOpen(sealed) {
      try {
        return open(sealed);
      } catch {
        return undefined;
      }
    },
  };
}
