/**
 * Text from programs and Apps shown so that it cannot disguise itself. Bidirectional controls (U+202E
 * and its kin) reorder the text around them on screen, so they are always shown as `\uXXXX` escapes.
 * Where a person decides by what they read (a decision card), `exactly` also escapes every other
 * invisible character: zero-width spaces and joiners, the soft hyphen, the byte-order mark (Unicode's
 * format characters), control characters and line separators, so two values that look alike are.
 */

/** Bidirectional controls (all of them are format characters). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Invisible characters: format (Cf), control (Cc), line and paragraph separators. */
const INVISIBLE = /[\p{Cf}\p{Cc}\u2028\u2029]/gu;

/** `\u202e`, or `\u{e0041}` beyond the basic plane (tag characters, which can smuggle hidden text). */
const asEscape = (c: string) => {
  const code = c.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

/** `text` with its bidirectional controls shown as escapes. */
export const withoutBidi = (text: string): string => text.replace(BIDI, asEscape);

/** `text` with every invisible character shown as an escape. */
export const exactly = (text: string): string => text.replace(INVISIBLE, asEscape);
