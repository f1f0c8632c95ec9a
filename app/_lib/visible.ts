/**
 * Text from programs and Apps shown so that it cannot disguise itself. Bidirectional controls (U+202E
 * and its kin) reorder the text around them on screen, so they are always shown as `\uXXXX` escapes.
 * Where a person decides by what they read (a decision card), `exactly` also escapes every other
 * invisible character: zero-width spaces and joiners, the soft hyphen, the byte-order mark (Unicode's
 * format characters), control characters other than white space, line separators, and the letters of a
 * word that mixes look-alike scripts, so two values that look alike are.
 */

/** Bidirectional controls (all of them are format characters). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/**
 * Invisible characters: format (Cf), control (Cc) but the tab and line breaks (white space that shows as
 * such; JSON text escapes them anyway), line and paragraph separators.
 */
const INVISIBLE = /[\p{Cf}\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/gu;

/** `\u202e`, or `\u{e0041}` beyond the basic plane (tag characters, which can smuggle hidden text). */
const asEscape = (c: string) => {
  const code = c.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

/** `text` with its bidirectional controls shown as escapes. */
export const withoutBidi = (text: string): string => text.replace(BIDI, asEscape);

/** Scripts whose letters look alike (a Cyrillic "а" is a Latin "a" on screen). */
const CONFUSABLE_SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u];
/** A word: letters, digits and the joiners of a domain or an address (so `\n` in JSON text ends one). */
const WORD = /[\p{L}\p{M}\p{N}._@-]+/gu;
const mixesScripts = (word: string) => CONFUSABLE_SCRIPTS.filter((script) => script.test(word)).length > 1;

/**
 * `text` with every invisible character shown as an escape, and in a word that mixes Latin, Cyrillic or
 * Greek letters (`pаypal.com` with a Cyrillic "а") every letter beyond ASCII too: `p\u0430ypal.com`. A word
 * in one script (`Müller`, `Привет`) is left as it is.
 */
export const exactly = (text: string): string =>
  text
    .replace(INVISIBLE, asEscape)
    .replace(WORD, (word) => (mixesScripts(word) ? word.replace(/[^\p{ASCII}]/gu, asEscape) : word));
