import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  consistencyProof,
  EMPTY_ROOT,
  Frontier,
  type Hash,
  inclusionProof,
  leafHash,
  type NodeReader,
  rootAt,
  verifyConsistency,
  verifyInclusion,
} from '../../src/engine/merkle.js';

/**
 * The Merkle tree of RFC 9162 against the published RFC 6962 test vectors (the eight leaves of the
 * certificate-transparency and transparency-dev suites), then random trees: every proof the engine
 * makes verifies with a verifier written here from the RFC's own definitions (not the engine's),
 * and fails after any single bit is changed.
 */

const hex = (h: Hash) => h.toString('hex');
const unhex = (text: string) => Buffer.from(text, 'hex');

const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  unhex,
);
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
/** (leaf index, tree size, audit path). */
const INCLUSION: [number, number, string[]][] = [
  [0, 1, []],
  [
    0,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    5,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    1,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];
/** (old size, new size, proof). */
const CONSISTENCY: [number, number, string[]][] = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];

/** Every node of a tree, kept as the Frontier makes them: a NodeReader over them. */
function grow(leaves: Buffer[]): { frontier: Frontier; node: NodeReader; roots: Hash[] } {
  const nodes = new Map<string, Hash>();
  const frontier = new Frontier();
  const roots: Hash[] = [];
  for (const leaf of leaves) {
    for (const made of frontier.append(leafHash(leaf))) nodes.set(`${made.level}/${made.index}`, made.hash);
    roots.push(frontier.root());
  }
  const node: NodeReader = (level, index) => {
    const found = nodes.get(`${level}/${index}`);
    if (!found) throw new Error(`no node ${level}/${index}`);
    return found;
  };
  return { frontier, node, roots };
}

// --- An independent reading of RFC 9162 §2.1, written from its definitions, for the checks below ---

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const mth = (leaves: Buffer[]): Buffer => {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Buffer.from([0]), leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
};
/** §2.1.3.2, the verification of an audit path, step by step. */
function rfcVerifyInclusion(hash: Buffer, index: number, size: number, path: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let [fn, sn, r] = [index, size - 1, hash];
  for (const p of path) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      r = sha(Buffer.from([1]), p, r);
      while (!(fn & 1) && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else r = sha(Buffer.from([1]), r, p);
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 && r.equals(root);
}
/** §2.1.4.2, the verification of a consistency proof, step by step. */
function rfcVerifyConsistency(first: number, second: number, proof: Buffer[], h1: Buffer, h2: Buffer): boolean {
  if (first === second) return proof.length === 0 && h1.equals(h2);
  if (proof.length === 0) return false;
  const path = (first & (first - 1)) === 0 ? [h1, ...proof] : proof;
  let [fn, sn] = [first - 1, second - 1];
  while (fn & 1) [fn, sn] = [fn >> 1, sn >> 1];
  let [fr, sr] = [path[0], path[0]];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      fr = sha(Buffer.from([1]), c, fr);
      sr = sha(Buffer.from([1]), c, sr);
      while (!(fn & 1) && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else sr = sha(Buffer.from([1]), sr, c);
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return fr.equals(h1) && sr.equals(h2) && sn === 0;
}
const flipped = (hash: Buffer, bit: number) => {
  const copy = Buffer.from(hash);
  copy[bit >> 3] ^= 1 << (bit & 7);
  return copy;
};

test('the roots of the published eight-leaf tree, size by size, and of the empty tree', () => {
  const { roots, node } = grow(LEAVES);
  assert.equal(roots.map(hex), ROOTS);
  for (let size = 1; size <= 8; size++) assert.is(hex(rootAt(size, node)), ROOTS[size - 1]);
  assert.is(hex(EMPTY_ROOT), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.is(hex(new Frontier().root()), hex(EMPTY_ROOT));
});

test('the published audit paths and consistency proofs, made and verified', () => {
  const { node } = grow(LEAVES);
  for (const [index, size, path] of INCLUSION) {
    const made = inclusionProof(index, size, node);
    assert.equal(made.map(hex), path, `inclusion ${index} in ${size}`);
    assert.ok(verifyInclusion(leafHash(LEAVES[index]), index, size, made, unhex(ROOTS[size - 1])));
  }
  for (const [from, to, proof] of CONSISTENCY) {
    const made = consistencyProof(from, to, node);
    assert.equal(made.map(hex), proof, `consistency ${from} to ${to}`);
    assert.ok(verifyConsistency(from, to, made, unhex(ROOTS[from - 1]), unhex(ROOTS[to - 1])));
  }
});

test('a frontier read back from its edge takes the next leaves as the one that grew them', () => {
  for (let size = 0; size < LEAVES.length; size++) {
    const { frontier } = grow(LEAVES.slice(0, size));
    const again = Frontier.fromEdge(frontier.edge());
    assert.is(again.size, size);
    for (const leaf of LEAVES.slice(size)) again.append(leafHash(leaf));
    assert.is(hex(again.root()), ROOTS[LEAVES.length - 1], `from an edge of ${size} leaves`);
  }
});

test('random trees: every proof verifies with the RFC verifier written here, and fails after any one bit changed', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 12 }), { minLength: 1, maxLength: 70 }),
      fc.nat(),
      fc.nat(),
      fc.nat(),
      (raw, a, b, bit) => {
        const leaves = raw.map((bytes) => Buffer.from(bytes));
        const { node } = grow(leaves);
        const size = 1 + (a % leaves.length);
        const index = b % size;
        const root = mth(leaves.slice(0, size));
        assert.ok(rootAt(size, node).equals(root));
        const path = inclusionProof(index, size, node);
        const leaf = sha(Buffer.from([0]), leaves[index]);
        assert.ok(rfcVerifyInclusion(leaf, index, size, path, root));
        assert.ok(verifyInclusion(leaf, index, size, path, root));
        const where = bit % (256 * (path.length + 2));
        const [which, at] = [Math.floor(where / 256), where % 256];
        if (which < path.length) {
          const bad = path.map((h, i) => (i === which ? flipped(h, at) : h));
          assert.not.ok(rfcVerifyInclusion(leaf, index, size, bad, root));
          assert.not.ok(verifyInclusion(leaf, index, size, bad, root));
        } else if (which === path.length) {
          assert.not.ok(rfcVerifyInclusion(flipped(leaf, at), index, size, path, root));
          assert.not.ok(verifyInclusion(flipped(leaf, at), index, size, path, root));
        } else assert.not.ok(verifyInclusion(leaf, index, size, path, flipped(root, at)));

        const from = 1 + (b % size);
        const older = mth(leaves.slice(0, from));
        const proof = consistencyProof(from, size, node);
        assert.ok(rfcVerifyConsistency(from, size, proof, older, root));
        assert.ok(verifyConsistency(from, size, proof, older, root));
        if (proof.length > 0) {
          const bad = proof.map((h, i) => (i === which % proof.length ? flipped(h, at) : h));
          assert.not.ok(rfcVerifyConsistency(from, size, bad, older, root));
          assert.not.ok(verifyConsistency(from, size, bad, older, root));
        }
        if (from < size) {
          assert.not.ok(verifyConsistency(from, size, proof, flipped(older, at), root));
          assert.not.ok(verifyConsistency(from, size, proof, older, flipped(root, at)));
        }
      },
    ),
    { numRuns: 400, seed: 31 },
  );
});

test('proofs outside the tree are refused', () => {
  const { node } = grow(LEAVES);
  assert.throws(() => inclusionProof(8, 8, node), /not in a tree/);
  assert.throws(() => consistencyProof(9, 8, node), /no consistency/);
  assert.not.ok(verifyInclusion(leafHash(LEAVES[0]), 8, 8, [], unhex(ROOTS[7])));
  assert.not.ok(verifyConsistency(4, 8, [], unhex(ROOTS[3]), unhex(ROOTS[7])));
});

test.run();
