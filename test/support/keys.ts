import { generateKeyPairSync } from 'node:crypto';
import sshpk from 'sshpk';

export interface KeyPair {
  publicKey: string;
  /** OpenSSH format (`-----BEGIN OPENSSH PRIVATE KEY-----`). */
  privateKey: string;
  /** PKCS#8 PEM of the same key. */
  privatePem: string;
  fingerprint: string;
}

/** Fresh keys for each test run: no private key is committed to the repository. */
export function makeKey(type: 'ed25519' | 'rsa', bits = 2048, comment = 'test@pmacontrol'): KeyPair {
  const pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: bits }) : generateKeyPairSync('ed25519');
  const privatePem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = sshpk.parsePrivateKey(privatePem, 'pem');
  key.comment = comment;
  const publicKey = key.toPublic().toString('ssh').trim();
  return {
    publicKey,
    privateKey: key.toString('openssh').toString(),
    privatePem,
    fingerprint: key.toPublic().fingerprint('sha256').toString(),
  };
}
