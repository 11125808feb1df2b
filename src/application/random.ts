import { randomBytes } from 'node:crypto';

/**
 * Random bytes, `size` at a time, taken from a pooled buffer: one call to the system's CSPRNG per
 * `perRefill` takes instead of one per take (a call costs about as much as sealing a short password,
 * or as a third of answering a GET). Every take is fresh random bytes, never handed out twice; it is
 * a view into the pool, the caller's to use and change.
 */
export function pooledRandom(size: number, perRefill = 256): () => Buffer {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + size > pool.length) {
      pool = randomBytes(size * perRefill);
      offset = 0;
    }
    const bytes = pool.subarray(offset, offset + size);
    offset += size;
    return bytes;
  };
}
