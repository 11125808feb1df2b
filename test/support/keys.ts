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

/**
 * An RSA "pair" made up around a public key: n = 2^bits - 1, e = 65537, and d, p, q, the CRT parts
 * random numbers. It parses as an OpenSSH private key whose public half is `publicKey`.
 */
export function fabricatedRsa(bits: number): { publicKey: string; privateKey: string } {
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => 1 + Math.floor(Math.random() * 254)));
  const n = Buffer.concat([Buffer.from([0]), Buffer.alloc(bits / 8, 0xff)]);
  const parts = [
    { name: 'n', data: n },
    { name: 'e', data: Buffer.from([0x01, 0x00, 0x01]) },
    { name: 'd', data: bytes(bits / 8 - 1) },
    { name: 'iqmp', data: bytes(bits / 16 - 1) },
    { name: 'p', data: bytes(bits / 16) },
    { name: 'q', data: bytes(bits / 16) },
  ];
  const key = new (sshpk as unknown as { PrivateKey: new (o: object) => sshpk.PrivateKey }).PrivateKey({
    type: 'rsa',
    parts,
  });
  return { publicKey: key.toPublic().toString('ssh').trim(), privateKey: key.toString('openssh').toString() };
}
