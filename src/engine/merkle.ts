import { createHash, hash } from 'node:crypto';

/**
 * The Merkle tree of RFC 9162 section 2.1 (RFC 6962), over SHA-256: a leaf's hash is
 * SHA-256(0x00 ‖ leaf), an interior node's SHA-256(0x01 ‖ left ‖ right), and the tree of n leaves
 * splits at the largest power of two below n. Nodes are named by their level (0: the leaves) and
 * their index at that level: node (k, i) is the hash of the complete subtree of leaves
 * [i·2^k, (i+1)·2^k).
 */

export type Hash = Buffer;

/** A function that gives the hash of complete subtree node (level, index) of the tree being asked. */
export type NodeReader = (level: number, index: number) => Hash;

const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/**
 * SHA-256(0x00 ‖ leaf). A text leaf is hashed as its UTF-8 bytes, in one call: the prefix is the
 * character U+0000, whose UTF-8 form is the byte 0x00 (bench/log.ts, the fold with the tree).
 */
export const leafHash = (leaf: Buffer | string): Hash =>
  typeof leaf === 'string'
    ? (hash('sha256', `\u0000${leaf}`, 'buffer') as unknown as Hash)
    : (hash('sha256', Buffer.concat([LEAF, leaf]), 'buffer') as unknown as Hash);

export const nodeHash = (left: Hash, right: Hash): Hash =>
  hash('sha256', Buffer.concat([NODE, left, right], 65), 'buffer') as unknown as Hash;

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = createHash('sha256').digest();

const isPowerOfTwo = (n: number): boolean => n > 0 && Number.isInteger(Math.log2(n));

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The smallest subtree the read models keep: its level, and the leaves under it. Nothing below it is
 * kept; the leaves are the log's events, hashed again when a proof or a check needs them, a group of
 * GROUP_LEAVES at a time (bench/history.ts, read-model files / the event log).
 */
export const GROUP_LEVEL = 4;
export const GROUP_LEAVES = 2 ** GROUP_LEVEL;

/** A node made as the tree grows: its level, its index at that level, its hash. */
export interface NewNode {
  level: number;
  index: number;
  hash: Hash;
}

/**
 * The right edge of a tree: the roots of its complete subtrees from the largest to the smallest,
 * which is all a tree needs to take another leaf and give its root (a compact range over [0, size)).
 */
export class Frontier {
  /** By level: the complete subtree ending the tree at that level, where the size has that bit set. */
  private readonly byLevel: (Hash | undefined)[];

  constructor(
    private count = 0,
    byLevel: (Hash | undefined)[] = [],
  ) {
    this.byLevel = byLevel;
  }

  get size(): number {
    return this.count;
  }

  /** Adds a leaf (its hash); returns every node the tree now has that it had not: the leaf, then the subtrees it completed. */
  append(leaf: Hash): NewNode[] {
    const index = this.count;
    const made: NewNode[] = [{ level: 0, index, hash: leaf }];
    let carry = leaf;
    let level = 0;
    while (this.byLevel[level] !== undefined) {
      carry = nodeHash(this.byLevel[level]!, carry);
      this.byLevel[level] = undefined;
      level++;
      made.push({ level, index: Math.floor(index / 2 ** level), hash: carry });
    }
    this.byLevel[level] = carry;
    this.count++;
    return made;
  }

  /** The root of the tree as it is (the empty tree's when it has no leaf). */
  root(): Hash {
    let root: Hash | undefined;
    for (const hash of this.byLevel) {
      if (hash !== undefined) root = root === undefined ? hash : nodeHash(hash, root);
    }
    return root ?? EMPTY_ROOT;
  }

  copy(): Frontier {
    return new Frontier(this.count, [...this.byLevel]);
  }

  /** The right edge as text (its size, then each level's hash in hex or null), for `fromEdge`. */
  edge(): string {
    return JSON.stringify([this.count, ...this.byLevel.map((hash) => hash?.toString('hex') ?? null)]);
  }

  /** The frontier `edge()` wrote. */
  static fromEdge(edge: string): Frontier {
    const [count, ...levels] = JSON.parse(edge) as [number, ...(string | null)[]];
    return new Frontier(
      count,
      levels.map((hex) => (hex === null ? undefined : Buffer.from(hex, 'hex'))),
    );
  }
}

/** MTH(D[start:end]) from the stored complete subtrees: at most two reads per level. */
export function subtreeHash(start: number, end: number, node: NodeReader): Hash {
  const n = end - start;
  if (n === 0) return EMPTY_ROOT;
  if (isPowerOfTwo(n) && start % n === 0) return node(Math.log2(n), start / n);
  const k = split(n);
  return nodeHash(subtreeHash(start, start + k, node), subtreeHash(start + k, end, node));
}

/** The root of the first `size` leaves. */
export const rootAt = (size: number, node: NodeReader): Hash => subtreeHash(0, size, node);

/** RFC 9162 §2.1.3.1: the audit path of leaf `index` in the tree of the first `size` leaves. */
export function inclusionProof(index: number, size: number, node: NodeReader): Hash[] {
  if (index < 0 || index >= size) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const path: Hash[] = [];
  const walk = (m: number, start: number, end: number) => {
    const n = end - start;
    if (n <= 1) return;
    const k = split(n);
    if (m < k) {
      walk(m, start, start + k);
      path.push(subtreeHash(start + k, end, node));
    } else {
      walk(m - k, start + k, end);
      path.push(subtreeHash(start, start + k, node));
    }
  };
  walk(index, 0, size);
  return path;
}

/** RFC 9162 §2.1.4.1: the proof that the tree of `from` leaves is a prefix of the tree of `to` leaves. */
export function consistencyProof(from: number, to: number, node: NodeReader): Hash[] {
  if (from < 0 || from > to) throw new RangeError(`no consistency from ${from} to ${to}`);
  if (from === 0 || from === to) return [];
  const proof: Hash[] = [];
  const walk = (m: number, start: number, end: number, whole: boolean) => {
    const n = end - start;
    if (m === n) {
      if (!whole) proof.push(subtreeHash(start, end, node));
      return;
    }
    const k = split(n);
    if (m <= k) {
      walk(m, start, start + k, whole);
      proof.push(subtreeHash(start + k, end, node));
    } else {
      walk(m - k, start + k, end, false);
      proof.push(subtreeHash(start, start + k, node));
    }
  };
  walk(from, 0, to, true);
  return proof;
}

/** RFC 9162 §2.1.3.2: whether `proof` shows leaf `index` (its hash) in the tree of `size` leaves with `root`. */
export function verifyInclusion(leaf: Hash, index: number, size: number, proof: Hash[], root: Hash): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 §2.1.4.2: whether `proof` shows the tree of `from` leaves (`root1`) is a prefix of the one of `to` (`root2`). */
export function verifyConsistency(from: number, to: number, proof: Hash[], root1: Hash, root2: Hash): boolean {
  if (from > to) return false;
  if (from === to) return proof.length === 0 && root1.equals(root2);
  if (from === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(from) ? [root1, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return fr.equals(root1) && sr.equals(root2) && sn === 0;
}
