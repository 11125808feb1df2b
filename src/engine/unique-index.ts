import { ShardedMap } from './sharded.js';

/** A value that must not appear twice in a table: one field, or several together. */
export interface KeySpec {
  fields: readonly string[];
  /** Fields compared case-insensitively: as `fold` makes them when they hold more than ASCII. */
  caseInsensitive?: readonly string[];
  /**
   * The key of a text past ASCII in a case-insensitive field (the rules say how names compare: case,
   * accents); ASCII text is folded in place, A-Z as a-z. Without it, toUpperCase.
   */
  fold?: (text: string) => string;
  /** Only these entries take part; all of them when absent. */
  among?: (entry: Record<string, unknown>) => boolean;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 16777619;

/** Mixes `text`'s characters into `hash` (FNV-1a); A-Z as a-z when `fold`, for text already lower-cased or ASCII. */
function mixText(hash: number, text: string, fold: boolean): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h = Math.imul(h ^ (fold && c >= 65 && c <= 90 ? c + 32 : c), FNV_PRIME);
  }
  return h;
}

/** True when `text` has a character past ASCII (whose case only the key's fold knows). */
function beyondAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return true;
  return false;
}

/**
 * A 30-bit hash of one entry's value of a unique key: a small integer, which V8 keeps in the hash
 * table itself, where a text key would have to be built, followed and compared (bench/http.ts create).
 * Equal values as `sameKey` sees them hash alike: a string by its characters (case-folded where
 * the key ignores case: ASCII folded in place, other text through the key's fold), anything else as
 * JSON, each behind a different tag so that "1" and 1 differ. Different values may share a hash:
 * the index compares the entries themselves.
 */
export function keyHash(key: KeySpec, entry: Record<string, unknown>): number {
  let h = FNV_OFFSET;
  for (const field of key.fields) {
    const value = entry[field];
    if (typeof value === 'string') {
      const fold = key.caseInsensitive?.includes(field) ?? false;
      h = mixText(Math.imul(h ^ 1, FNV_PRIME), fold && beyondAscii(value) ? folded(key, value) : value, fold);
    } else if (typeof value === 'number' && (value | 0) === value)
      h = Math.imul(Math.imul(h ^ 2, FNV_PRIME) ^ value, FNV_PRIME);
    else h = mixText(Math.imul(h ^ 3, FNV_PRIME), JSON.stringify(value) ?? '', false);
    h = Math.imul(h ^ 0xff, FNV_PRIME);
  }
  return h & 0x3fffffff;
}

/** A text past ASCII as a case-insensitive key compares it (upper-case: mixText then folds its A-Z). */
const folded = (key: KeySpec, text: string) => (key.fold ? key.fold(text) : text.toUpperCase());

/** A case-insensitive field's text as it compares: ASCII upper-cased, any other folded by the key. */
const comparable = (key: KeySpec, text: string) => (beyondAscii(text) ? folded(key, text) : text.toUpperCase());

/** Whether two entries have the same value of a unique key (what `keyHash` hashes alike). */
function sameKey(key: KeySpec, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  for (const field of key.fields) {
    const [x, y] = [a[field], b[field]];
    if (x === y) continue;
    if (typeof x === 'string' && typeof y === 'string') {
      if (!key.caseInsensitive?.includes(field) || comparable(key, x) !== comparable(key, y)) return false;
    } else if (typeof x === 'string' || typeof y === 'string' || JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/**
 * One unique key: the ids of the entries holding each value, found by the value's hash. Most hashes
 * have one id; two when values collide, or when an older log holds the same value twice (the first
 * holder then stays first, as its entries were indexed).
 */
export class UniqueIndex<K extends KeySpec> {
  private readonly ids = new ShardedMap<number, number | number[]>();

  constructor(
    readonly key: K,
    /** The entry as indexed, to compare values that share a hash. */
    private readonly entryOf: (id: number) => Record<string, unknown> | undefined,
  ) {}

  private applies(entry: Record<string, unknown>): boolean {
    return this.key.among?.(entry) ?? true;
  }

  add(id: number, entry: Record<string, unknown>): void {
    if (!this.applies(entry)) return;
    const hash = keyHash(this.key, entry);
    const held = this.ids.get(hash);
    if (held === undefined) this.ids.set(hash, id);
    else if (typeof held === 'number') {
      if (held !== id) this.ids.set(hash, [held, id]);
    } else if (!held.includes(id)) held.push(id);
  }

  remove(id: number, entry: Record<string, unknown>): void {
    if (!this.applies(entry)) return;
    const hash = keyHash(this.key, entry);
    const held = this.ids.get(hash);
    if (held === id) this.ids.delete(hash);
    else if (typeof held === 'object') {
      const rest = held.filter((other) => other !== id);
      this.ids.set(hash, rest.length === 1 ? rest[0] : rest);
    }
  }

  /** Whether an entry going from `a` to `b` changes its place in this index. */
  moves(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
    return this.applies(a) !== this.applies(b) || this.key.fields.some((field) => a[field] !== b[field]);
  }

  /** Another entry than `self` holding the candidate's value, if any. */
  holder(candidate: Record<string, unknown>, self: number): number | undefined {
    if (!this.applies(candidate)) return undefined;
    const held = this.ids.get(keyHash(this.key, candidate));
    if (typeof held === 'number') return this.holds(held, candidate, self) ? held : undefined;
    return held?.find((id) => this.holds(id, candidate, self));
  }

  private holds(id: number, candidate: Record<string, unknown>, self: number): boolean {
    const entry = id === self ? undefined : this.entryOf(id);
    return entry !== undefined && sameKey(this.key, entry, candidate);
  }
}
