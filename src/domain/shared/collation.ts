/**
 * How PmaControl's MariaDB compares names (its tables' utf8mb4_general_ci / utf8mb3_general_ci):
 * case and accents ignored, `ß` as `s`, every character past the Basic Multilingual Plane equal to
 * every other. `collationKey` makes two names the same key whenever MariaDB holds them equal — a
 * little more often, never less (U+212B ANGSTROM SIGN and `Å` share a key here and not there), so that
 * a name this service accepts as new is never a duplicate in PmaControl's unique index. Canonically
 * equivalent forms (NFC, NFD) share a key too. test/domain/collation.test.ts compares it with a real
 * MariaDB over the whole Basic Multilingual Plane.
 */

/** The characters MariaDB's general_ci folds where case mapping and accent removal alone do not. */
const SPECIAL: Record<string, string> = {
  ß: 'S',
  ẞ: 'S',
  '\u0345': 'Ι', // COMBINING GREEK YPOGEGRAMMENI, weighted as IOTA
  ϲ: 'Σ', // GREEK LUNATE SIGMA SYMBOL
};
const SPECIALS = new RegExp(`[${Object.keys(SPECIAL).join('')}]`, 'gu');
const ASTRAL = /[\u{10000}-\u{10FFFF}]/gu;
const MARKS = /\p{M}/gu;

/** The key two names share exactly when this service takes them as the same name. */
export function collationKey(text: string): string {
  return text
    .replace(SPECIALS, (c) => SPECIAL[c])
    .normalize('NFD')
    .replace(MARKS, '')
    .replace(ASTRAL, '\uFFFD')
    .toUpperCase();
}

/** A surrogate not in a pair (read with the `u` flag, a pair is one character, never a surrogate). */
const LONE_SURROGATE = /\p{Cs}/u;
/** Format characters people cannot see: zero-width, bidirectional controls, word joiners, BOM (Unicode Cf). */
const INVISIBLE = /\p{Cf}/u;
/** Letters of the scripts whose letters pass for one another (`а` Cyrillic for `a` Latin, `ο` Greek for `o`). */
const SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u];

/**
 * What makes a text unfit for a name people read: ill-formed Unicode (a lone surrogate), a character
 * people cannot see, or (`name`: a name that must be unique) letters of Latin, Cyrillic and Greek
 * mixed, which pass for one another. Undefined when it is fit.
 */
export function unreadable(text: string, name = false): { code: string; message: string } | undefined {
  if (LONE_SURROGATE.test(text)) return { code: 'ill_formed', message: 'holds ill-formed Unicode (a lone surrogate)' };
  const invisible = INVISIBLE.exec(text);
  if (invisible) {
    const at = invisible[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return { code: 'invisible_character', message: `holds U+${at}, a character people reading it cannot see` };
  }
  if (name && SCRIPTS.filter((script) => script.test(text)).length > 1) {
    return { code: 'mixed_scripts', message: 'mixes letters of Latin, Cyrillic or Greek, which pass for one another' };
  }
  return undefined;
}
