/** A small deterministic generator (mulberry32: the same sequence on every run), 0 … n − 1. */
export function random(seed: number): (n: number) => number {
  let state = seed;
  return (n: number) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
  };
}
