/**
 * The checks the log view makes in the browser, with its own SHA-256 and Ed25519 (WebCrypto): a
 * signed note's signature (C2SP signed note), an inclusion proof (RFC 9162 §2.1.3.2) and a
 * consistency proof (RFC 9162 §2.1.4.2). The console does not trust the service to say a proof holds.
 */

export const hex = (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
export const fromHex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

export async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', joined));
}

const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);
const same = (a: Uint8Array, b: Uint8Array) => hex(a) === hex(b);

/** RFC 9162 §2.1.3.2: whether `leaf` (its hash) is at `index` of the tree of `size` leaves whose root is `root`. */
export async function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  proof: Uint8Array[],
  root: Uint8Array,
) {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = await nodeHash(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(r, root);
}

/** RFC 9162 §2.1.4.2: whether the tree of `to` leaves (root2) extends the tree of `from` leaves (root1). */
export async function verifyConsistency(
  from: number,
  to: number,
  proof: Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): Promise<boolean> {
  if (from > to) return false;
  if (from === to) return proof.length === 0 && same(root1, root2);
  if (from === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = (from & (from - 1)) === 0 ? [root1, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else sr = await nodeHash(sr, c);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(fr, root1) && same(sr, root2);
}

export interface Checkpoint {
  note: string;
  origin: string;
  size: number;
  root: Uint8Array;
  /** Whether a signature line verifies with the log's key. */
  signed: boolean;
}

/** A checkpoint (C2SP signed note) read, and its signature checked against `key` (`name+id+base64`, Ed25519). */
export async function readCheckpoint(note: string, key: string): Promise<Checkpoint> {
  const normal = note.replace(/\r\n/g, '\n').replace(/\n*$/, '\n');
  const split = normal.lastIndexOf('\n\n');
  if (split < 0) throw new Error('this is not a signed checkpoint: no line of signatures after its text');
  const text = normal.slice(0, split + 1);
  const [origin = '', size = '', root = ''] = text.split('\n');
  if (!/^\d+$/.test(size) || !/^[A-Za-z0-9+/]{43}=$/.test(root)) {
    throw new Error('this is not a checkpoint: its second line is a size and its third a base64 root hash');
  }
  const [name, id] = key.split('+');
  const raw = fromBase64(key.split('+').slice(2).join('+')).subarray(1);
  const publicKey = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
  let signed = false;
  for (const line of normal
    .slice(split + 2)
    .trim()
    .split('\n')) {
    const [, signer, signature = ''] = /^\u2014 (\S+) (\S+)$/.exec(line) ?? [];
    if (signer !== name || !/^[A-Za-z0-9+/]+=*$/.test(signature)) continue;
    const bytes = fromBase64(signature);
    if (bytes.length !== 68 || hex(bytes.subarray(0, 4)) !== id) continue;
    const message = new TextEncoder().encode(text);
    signed ||= await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, bytes.subarray(4), message);
  }
  return { note: normal, origin, size: Number(size), root: fromBase64(root), signed };
}
