import { collationKey } from '../domain/shared/collation.js';
import type { Charset, Collation } from './columns.js';

/**
 * PmaControl's charsets and collations, as MariaDB applies them: which characters a column can hold,
 * and which two values its unique keys take for the same. Measured on MariaDB 10.11 (every byte of
 * latin1 converted to Unicode and weighed with WEIGHT_STRING); test/pmacontrol/charsets.test.ts
 * measures them again against the running server.
 */

/**
 * MariaDB's latin1 is Windows-1252, its five undefined bytes (0x81, 0x8D, 0x8F, 0x90, 0x9D) mapped to
 * the C1 controls of the same code: the characters of bytes 0x80–0x9F. The others are Unicode's own.
 */
const HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

/** Unicode code point → latin1 byte, for the 256 characters latin1 holds. */
const LATIN1 = new Map<number, number>();
for (let byte = 0; byte < 256; byte++) LATIN1.set(byte >= 0x80 && byte < 0xa0 ? HIGH[byte - 0x80]! : byte, byte);

/**
 * latin1_swedish_ci's weight of each byte: ASCII letters of either case weigh the capital; accented
 * letters weigh their base letter, except Ä Æ (weighing `\`), Å (`[`), Ö (`]`), Ü Ý (Y), Ø, Þ, ß, ×,
 * ÷ and ÿ, which weigh themselves. Trailing spaces are not weighed (PAD SPACE).
 */
const SWEDISH = new Uint8Array(256).map((_, byte) => byte);
for (let byte = 0x61; byte <= 0x7a; byte++) SWEDISH[byte] = byte - 0x20;
/** The weights of the capitals À–ß (0xC0–0xDF), in hex; their small letters weigh the same, but ÷ and ÿ, which weigh themselves. */
const SWEDISH_HIGH = '414141415C5B5C434545454549494949444E4F4F4F4F5DD7D85555555959DEDF';
for (let i = 0; i < 32; i++) {
  const weight = Number.parseInt(SWEDISH_HIGH.slice(2 * i, 2 * i + 2), 16);
  SWEDISH[0xc0 + i] = weight;
  if (0xe0 + i !== 0xf7 && 0xe0 + i !== 0xff) SWEDISH[0xe0 + i] = weight;
}

/** The first character of `text` that `charset` cannot hold, or undefined. */
export function unheldCharacter(text: string, charset: Charset): string | undefined {
  for (const character of text) {
    const point = character.codePointAt(0)!;
    if (charset === 'latin1' ? !LATIN1.has(point) : charset === 'utf8mb3' && point > 0xffff) return character;
  }
  return undefined;
}

/** How many bytes `text` takes in `charset` (every character held). */
export function byteLength(text: string, charset: Charset): number {
  return charset === 'latin1' ? [...text].length : Buffer.byteLength(text, 'utf8');
}

/** What `collation` compares of `text` (held by its charset): two values with the same key are one value to it. */
export function keyIn(collation: Collation, text: string): string {
  switch (collation) {
    case 'latin1_bin':
      return text.replace(/ +$/, '');
    case 'latin1_swedish_ci': {
      let key = '';
      for (const character of text) key += String.fromCharCode(SWEDISH[LATIN1.get(character.codePointAt(0)!) ?? 0x3f]!);
      return key.replace(/ +$/, '');
    }
    default:
      return collationKey(text);
  }
}
