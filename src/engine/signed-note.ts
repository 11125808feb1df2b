import { createHash, createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from 'node:crypto';

/**
 * C2SP signed notes with Ed25519 keys: a text, a blank line, and signature lines
 * `— <key name> <base64(key id ‖ signature)>`; keys written as `<name>+<key id>+<base64(0x01 ‖ key)>`
 * (verifier) and `PRIVATE+KEY+<name>+<key id>+<base64(0x01 ‖ seed)>` (signer). The key id is the
 * first four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key). And C2SP tlog-checkpoint notes:
 * origin, tree size, base64 root hash, one a line.
 */

const ED25519 = 0x01;
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const DASH = '\u2014';

export class NoteError extends Error {
  override name = 'NoteError';
}

export interface SignerKey {
  name: string;
  keyId: number;
  publicKey: Buffer;
  privateKey: KeyObject;
}

export interface VerifierKey {
  name: string;
  keyId: number;
  publicKey: Buffer;
}

const validName = (name: string) => name.length > 0 && !/[\s+]/.test(name);

function keyIdOf(name: string, publicKey: Buffer): number {
  return createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from([ED25519]), publicKey]))
    .digest()
    .readUInt32BE(0);
}

const hex8 = (id: number) => id.toString(16).padStart(8, '0');

function signerFromSeed(name: string, seed: Buffer): SignerKey {
  if (!validName(name)) throw new NoteError(`a key name has no space and no "+": ${JSON.stringify(name)}`);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = Buffer.from(createPublicKey(privateKey).export({ format: 'der', type: 'spki' })).subarray(-32);
  return { name, keyId: keyIdOf(name, publicKey), publicKey, privateKey };
}

/** A new Ed25519 signer key named `name`. */
export const generateSigner = (name: string): SignerKey => signerFromSeed(name, randomBytes(32));

/** `PRIVATE+KEY+<name>+<id>+<base64>`: its id must be the one its key gives. */
export function parseSigner(text: string): SignerKey {
  const parts = text.trim().split('+');
  if (parts.length < 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY')
    throw new NoteError('a signer key is PRIVATE+KEY+<name>+<key id>+<base64 key>');
  const [name, id] = [parts[2], parts[3]];
  const raw = Buffer.from(parts.slice(4).join('+'), 'base64');
  if (raw.length !== 33 || raw[0] !== ED25519) throw new NoteError('the signer key is not an Ed25519 key');
  const signer = signerFromSeed(name, raw.subarray(1));
  if (hex8(signer.keyId) !== id) throw new NoteError(`the signer key's id ${id} is not the one its key gives`);
  return signer;
}

export const signerText = (signer: SignerKey, seed: Buffer): string =>
  `PRIVATE+KEY+${signer.name}+${hex8(signer.keyId)}+${Buffer.concat([Buffer.from([ED25519]), seed]).toString('base64')}`;

/** The signer key's text (its seed read back from the private key). */
export function formatSigner(signer: SignerKey): string {
  const der = signer.privateKey.export({ format: 'der', type: 'pkcs8' });
  return signerText(signer, Buffer.from(der).subarray(-32));
}

/** `<name>+<id>+<base64(0x01 ‖ public key)>`. */
export const formatVerifier = (key: VerifierKey): string =>
  `${key.name}+${hex8(key.keyId)}+${Buffer.concat([Buffer.from([ED25519]), key.publicKey]).toString('base64')}`;

export function parseVerifier(text: string): VerifierKey {
  const parts = text.trim().split('+');
  if (parts.length < 3) throw new NoteError('a verifier key is <name>+<key id>+<base64 key>');
  const [name, id] = [parts[0], parts[1]];
  const raw = Buffer.from(parts.slice(2).join('+'), 'base64');
  if (!validName(name) || raw.length !== 33 || raw[0] !== ED25519 || !/^[0-9a-f]{8}$/.test(id))
    throw new NoteError('the verifier key is not an Ed25519 key in note form');
  const publicKey = raw.subarray(1);
  if (hex8(keyIdOf(name, publicKey)) !== id)
    throw new NoteError(`the verifier key's id ${id} is not the one its key gives`);
  return { name, keyId: Number.parseInt(id, 16), publicKey };
}

/** The note: `text` (ending with a newline), a blank line, and the signature line of `signer`. */
export function signNote(text: string, signer: SignerKey): string {
  if (!text.endsWith('\n')) throw new NoteError('a note text ends with a newline');
  const id = Buffer.alloc(4);
  id.writeUInt32BE(signer.keyId);
  const signature = sign(null, Buffer.from(text, 'utf8'), signer.privateKey);
  return `${text}\n${DASH} ${signer.name} ${Buffer.concat([id, signature]).toString('base64')}\n`;
}

/** The text of a note that `key` signed; throws NoteError when no signature of that key verifies. */
export function openNote(note: string, key: VerifierKey): string {
  const split = note.lastIndexOf('\n\n', note.length - 2);
  if (split < 0 || !note.endsWith('\n')) throw new NoteError('not a signed note: no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, key.publicKey]), format: 'der', type: 'spki' });
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const match = new RegExp(`^${DASH} (\\S+) ([A-Za-z0-9+/=]+)$`).exec(line);
    if (!match) throw new NoteError(`not a signature line: ${JSON.stringify(line.slice(0, 80))}`);
    const raw = Buffer.from(match[2], 'base64');
    if (match[1] !== key.name || raw.length !== 68 || raw.readUInt32BE(0) !== key.keyId) continue;
    if (verify(null, Buffer.from(text, 'utf8'), publicKey, raw.subarray(4))) return text;
    throw new NoteError(`the signature of ${key.name} does not verify`);
  }
  throw new NoteError(`the note has no signature by ${key.name}+${hex8(key.keyId)}`);
}

/** A tlog-checkpoint: its origin, tree size and root hash. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
}

export const checkpointText = ({ origin, size, root }: Checkpoint): string =>
  `${origin}\n${size}\n${root.toString('base64')}\n`;

/** The checkpoint a note's text holds (lines after the third, extension lines, are allowed and ignored). */
export function parseCheckpoint(text: string): Checkpoint {
  const [origin, size, root] = text.split('\n');
  const hash = Buffer.from(root ?? '', 'base64');
  if (!origin || !/^(0|[1-9][0-9]*)$/.test(size ?? '') || hash.length !== 32 || hash.toString('base64') !== root)
    throw new NoteError('not a checkpoint: origin, tree size and a base64 SHA-256 root, one a line');
  return { origin, size: Number(size), root: hash };
}
