/**
 * JSON text → QuickJS's binary object format (what `JS_ReadObject`, exposed as `context.decodeBinaryJSON`,
 * reads), written by the host so a large call result reaches the guest without QuickJS's own JSON.parse.
 * Measured in CPU time on the 5,000-row bigresult text (361 K characters): QuickJS's JSON.parse 8.0 ms, this
 * transcoder ~2.5–3.7 ms (about V8's own JSON.parse) plus the decode 3.1 ms; a whole bigresult run 0.79× (see
 * worker/PROGRESS.md). Runtime-neutral (no Node or DOM imports).
 *
 * The format is that of the bundled QuickJS build (bellard 2025-09-13, format version 5, written without
 * bytecode): a version byte, the atom table (a LEB128 count, then each atom as a string), then the value.
 * Values: 1 null, 3 false, 4 true, 5 int32 (zigzag LEB128), 6 float64 (8 bytes little-endian), 7 string
 * (LEB128 of length << 1 | wide, then Latin-1 bytes or UTF-16LE units), 8 object (LEB128 count, then per
 * property an atom reference and a value), 9 array (LEB128 length, then the values). An atom reference is
 * the LEB128 of index << 1 into the table (first index 1) or, for an array-index key up to 2^31 − 1, of
 * key << 1 | 1. `SELF_CHECK_JSON` is transcoded and compared byte for byte with the build's own encoder
 * before a module uses this (run-session.ts), so a QuickJS build with another format falls back to JSON.parse.
 *
 * Only strict JSON is accepted: anything else (a syntax error, nesting deeper than `maxDepth`) returns
 * undefined and the caller keeps the text path, where the guest's JSON.parse reports it exactly as before.
 * Decoding defines each property as an own data property (like JSON.parse): "__proto__" stays an own key,
 * a duplicate key keeps its first position and its last value.
 */

/** QuickJS's `BC_VERSION` for this build (the first byte its encoder writes). */
const FORMAT_VERSION = 5;
export const TAG_NULL = 1;
export const TAG_FALSE = 3;
export const TAG_TRUE = 4;
export const TAG_INT32 = 5;
export const TAG_FLOAT64 = 6;
export const TAG_STRING = 7;
export const TAG_OBJECT = 8;
export const TAG_ARRAY = 9;
/** QuickJS's `JS_ATOM_MAX_INT`: array-index keys up to this are atoms of their own (tagged integers). */
const ATOM_MAX_INT = 0x7fffffff;

/**
 * A JSON value covering every kind the transcoder writes (Latin-1 and wide strings, escapes, ints, floats,
 * -0, nested containers, a count over 127, integer and non-integer keys); compared with QuickJS's own encoding.
 */
export const SELF_CHECK_JSON = JSON.stringify({
  n: null,
  t: true,
  f: false,
  i: [0, 1, -1, 63, -64, 64, 2147483647, -2147483648, 2147483648, -0.0, 1.5, -2.5e-300, 1e21],
  s: ["", "ascii", "\u00e9\u00ff", "\u20ac", "\ud83d\ude00", 'tab\tquote"back\\slash/\n'],
  o: { __proto__x: 1, "": {}, nested: { a: [[], {}] } },
  k: { "0": 1, "7": 2, "2147483647": 3, "2147483648": 4, "01": 5, "-1": 6, "1.5": 7 },
  a: Array.from({ length: 130 }, (_, i) => i % 3),
  w: { "\u20ackey": "x\u00e9" },
});

/**
 * Transcodes strict JSON text; undefined if it is not strict JSON or nests deeper than `maxDepth`. The encoding
 * is the concatenation of the two parts (the atom table, then the value), kept apart to save a copy.
 */
export function jsonToBinary(text: string, maxDepth: number): [Uint8Array, Uint8Array] | undefined {
  return new Transcoder(text, maxDepth).run();
}

/** The atom table part of an encoding (version byte, count, atoms), as `jsonToBinary` writes it. */
export function atomTable(atoms: readonly string[]): Uint8Array {
  return Transcoder.atomTable(atoms);
}

/** The parts of `jsonToBinary` joined (for tests and checks). */
export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

class Transcoder {
  private out: Uint8Array;
  private pos = 0;
  private i = 0;
  private readonly atoms = new Map<string, number>();
  private readonly atomList: string[] = [];
  private readonly scratch = new DataView(new ArrayBuffer(8));
  /** The last scanned string (see scanString): end quote, decoded length, wide, escaped. */
  private scanEnd = 0;
  private scanLength = 0;
  private scanWide = false;
  private scanEscaped = false;
  /** Per property position in an object, the key (without escapes) and atom reference last seen there. */
  private readonly recentKeys: string[] = [];
  private readonly recentRefs: number[] = [];

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {
    this.out = new Uint8Array(Math.max(64, text.length + (text.length >> 1)));
  }

  run(): [Uint8Array, Uint8Array] | undefined {
    if (!this.value(0)) return undefined;
    this.skipSpace();
    if (this.i !== this.text.length) return undefined;
    const body = this.out.subarray(0, this.pos);
    // The atom table goes first; it is written into a buffer of its own.
    this.out = new Uint8Array(16 + this.atomList.length * 8);
    this.pos = 0;
    this.byte(FORMAT_VERSION);
    this.leb(this.atomList.length);
    for (const atom of this.atomList) this.stringBody(atom, 0, atom.length, isWide(atom));
    return [this.out.subarray(0, this.pos), body];
  }

  /** The encoding's first part for these atoms, in table order (for bjson-ascii.ts, which shares the format). */
  static atomTable(atoms: readonly string[]): Uint8Array {
    const writer = new Transcoder("", 0);
    writer.atomList.push(...atoms);
    writer.out = new Uint8Array(16 + atoms.length * 8);
    writer.byte(FORMAT_VERSION);
    writer.leb(atoms.length);
    for (const atom of atoms) writer.stringBody(atom, 0, atom.length, isWide(atom));
    return writer.out.subarray(0, writer.pos);
  }

  // Output ------------------------------------------------------------------------------------------

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.out.length) return;
    let size = this.out.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.out.subarray(0, this.pos));
    this.out = grown;
  }

  private byte(value: number): void {
    this.ensure(1);
    this.out[this.pos++] = value;
  }

  /** Unsigned LEB128 of a value below 2^32. */
  private leb(value: number): void {
    this.ensure(5);
    let v = value >>> 0;
    while (v >= 0x80) {
      this.out[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.out[this.pos++] = v;
  }

  /**
   * Writes a container's count at `at`, where one byte was reserved: a count over 127 needs more, so the
   * container's content moves up to make room.
   */
  private patchCount(at: number, count: number): void {
    if (count < 0x80) {
      this.out[at] = count;
      return;
    }
    let extra = 0;
    for (let v = count >>> 7; v > 0; v >>>= 7) extra += 1;
    this.ensure(extra);
    this.out.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    let v = count;
    let p = at;
    while (v >= 0x80) {
      this.out[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.out[p] = v;
  }

  // Input -------------------------------------------------------------------------------------------

  private skipSpace(): void {
    const text = this.text;
    let i = this.i;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i += 1;
      else break;
    }
    this.i = i;
  }

  /** One value at the cursor (after optional whitespace); false if the text is not strict JSON there. */
  private value(depth: number): boolean {
    let c = this.text.charCodeAt(this.i);
    if (c <= 0x20) {
      this.skipSpace();
      c = this.text.charCodeAt(this.i);
    }
    if (c === 0x22) return this.string();
    if (c === 0x7b) return depth < this.maxDepth && this.object(depth + 1);
    if (c === 0x5b) return depth < this.maxDepth && this.array(depth + 1);
    if (c === 0x74) return this.literal("true", TAG_TRUE);
    if (c === 0x66) return this.literal("false", TAG_FALSE);
    if (c === 0x6e) return this.literal("null", TAG_NULL);
    return this.number();
  }

  private literal(word: string, tag: number): boolean {
    if (!this.text.startsWith(word, this.i)) return false;
    this.i += word.length;
    this.byte(tag);
    return true;
  }

  private object(depth: number): boolean {
    this.byte(TAG_OBJECT);
    const at = this.pos;
    this.byte(0);
    this.i += 1;
    this.skipSpace();
    let count = 0;
    if (this.text.charCodeAt(this.i) === 0x7d) {
      this.i += 1;
      return true;
    }
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== 0x22 || !this.key(count)) return false;
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== 0x3a) return false;
      this.i += 1;
      if (!this.value(depth)) return false;
      count += 1;
      this.skipSpace();
      const c = this.text.charCodeAt(this.i);
      this.i += 1;
      if (c === 0x2c) continue;
      if (c !== 0x7d) return false;
      this.patchCount(at, count);
      return true;
    }
  }

  private array(depth: number): boolean {
    this.byte(TAG_ARRAY);
    const at = this.pos;
    this.byte(0);
    this.i += 1;
    this.skipSpace();
    let count = 0;
    if (this.text.charCodeAt(this.i) === 0x5d) {
      this.i += 1;
      return true;
    }
    for (;;) {
      if (!this.value(depth)) return false;
      count += 1;
      this.skipSpace();
      const c = this.text.charCodeAt(this.i);
      this.i += 1;
      if (c === 0x2c) continue;
      if (c !== 0x5d) return false;
      this.patchCount(at, count);
      return true;
    }
  }

  /** A property key at the cursor's quote, written as an atom reference; `slot` is its position in the object. */
  private key(slot: number): boolean {
    const text = this.text;
    const start = this.i + 1;
    // Rows of one shape repeat their keys in order: compare in place before slicing and looking up.
    const recent = this.recentKeys[slot];
    if (recent !== undefined && text.charCodeAt(start + recent.length) === 0x22 && text.startsWith(recent, start)) {
      this.i = start + recent.length + 1;
      this.leb(this.recentRefs[slot] as number);
      return true;
    }
    if (!this.scanString()) return false;
    const end = this.scanEnd;
    const key = this.scanEscaped ? this.unescape(start, end, this.scanLength) : text.slice(start, end);
    this.i = end + 1;
    const index = arrayIndexAtom(key);
    let ref: number;
    if (index >= 0) {
      ref = index * 2 + 1;
    } else {
      let atom = this.atoms.get(key);
      if (atom === undefined) {
        atom = this.atomList.length + 1;
        this.atoms.set(key, atom);
        this.atomList.push(key);
      }
      ref = atom * 2;
    }
    if (!this.scanEscaped) {
      this.recentKeys[slot] = key;
      this.recentRefs[slot] = ref;
    }
    this.leb(ref);
    return true;
  }

  private string(): boolean {
    const text = this.text;
    const start = this.i + 1;
    // Most strings are short Latin-1 without escapes: copy those while scanning them (one pass, and a
    // one-byte length header: under 64 units).
    const limit = Math.min(text.length, start + 63);
    this.ensure(66);
    const out = this.out;
    let pos = this.pos + 2;
    let i = start;
    for (; i < limit; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22 || c === 0x5c || c < 0x20 || c > 0xff) break;
      out[pos++] = c;
    }
    if (text.charCodeAt(i) === 0x22) {
      out[this.pos] = TAG_STRING;
      out[this.pos + 1] = (i - start) * 2;
      this.pos = pos;
      this.i = i + 1;
      return true;
    }
    if (!this.scanString()) return false;
    const end = this.scanEnd;
    this.byte(TAG_STRING);
    if (this.scanEscaped) {
      const value = this.unescape(start, end, this.scanLength);
      this.stringBody(value, 0, value.length, this.scanWide);
    } else {
      this.stringBody(this.text, start, end, this.scanWide);
    }
    this.i = end + 1;
    return true;
  }

  /**
   * Finds the end of the string whose opening quote is at the cursor: its decoded length, whether any unit
   * is above U+00FF (a wide string) and whether it has escapes, into the `scan` fields. False for a control
   * character, a bad escape or no closing quote (not JSON).
   */
  private scanString(): boolean {
    const text = this.text;
    const start = this.i + 1;
    let i = start;
    let length = 0;
    let wide = false;
    let escaped = false;
    for (;;) {
      if (i >= text.length) return false;
      const c = text.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) return false;
      if (c === 0x5c) {
        escaped = true;
        const e = text.charCodeAt(i + 1);
        if (e === 0x75) {
          const unit = hex4(text, i + 2);
          if (unit < 0) return false;
          if (unit > 0xff) wide = true;
          i += 6;
        } else if (ESCAPES[e] !== undefined) {
          i += 2;
        } else {
          return false;
        }
      } else {
        if (c > 0xff) wide = true;
        i += 1;
      }
      length += 1;
    }
    this.scanEnd = i;
    this.scanLength = length;
    this.scanWide = wide;
    this.scanEscaped = escaped;
    return true;
  }

  /** The decoded value of an escaped string between `start` and `end` (already checked by scanString). */
  private unescape(start: number, end: number, length: number): string {
    const text = this.text;
    const units = new Uint16Array(length);
    let n = 0;
    for (let i = start; i < end; ) {
      const c = text.charCodeAt(i);
      if (c !== 0x5c) {
        units[n++] = c;
        i += 1;
      } else if (text.charCodeAt(i + 1) === 0x75) {
        units[n++] = hex4(text, i + 2);
        i += 6;
      } else {
        units[n++] = ESCAPES[text.charCodeAt(i + 1)] as number;
        i += 2;
      }
    }
    let value = "";
    for (let i = 0; i < n; i += 8192) value += String.fromCharCode(...units.subarray(i, Math.min(n, i + 8192)));
    return value;
  }

  /** A string's length header and units, from `source` between `start` and `end`. */
  private stringBody(source: string, start: number, end: number, wide: boolean): void {
    const length = end - start;
    this.leb(length * 2 + (wide ? 1 : 0));
    const out = this.ensureOut(wide ? length * 2 : length);
    let pos = this.pos;
    if (wide) {
      for (let i = start; i < end; i++) {
        const c = source.charCodeAt(i);
        out[pos++] = c & 0xff;
        out[pos++] = c >>> 8;
      }
    } else {
      for (let i = start; i < end; i++) out[pos++] = source.charCodeAt(i);
    }
    this.pos = pos;
  }

  private ensureOut(bytes: number): Uint8Array {
    this.ensure(bytes);
    return this.out;
  }

  /** A JSON number at the cursor (strict grammar), written as int32 when it is one (not -0), else float64. */
  private number(): boolean {
    const text = this.text;
    const start = this.i;
    let i = start;
    if (text.charCodeAt(i) === 0x2d) i += 1;
    const first = text.charCodeAt(i);
    if (first === 0x30) i += 1;
    else if (first >= 0x31 && first <= 0x39) {
      while (isDigit(text.charCodeAt(i))) i += 1;
    } else return false;
    let integral = true;
    if (text.charCodeAt(i) === 0x2e) {
      integral = false;
      i += 1;
      if (!isDigit(text.charCodeAt(i))) return false;
      while (isDigit(text.charCodeAt(i))) i += 1;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      integral = false;
      i += 1;
      const sign = text.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i += 1;
      if (!isDigit(text.charCodeAt(i))) return false;
      while (isDigit(text.charCodeAt(i))) i += 1;
    }
    this.i = i;
    let value: number;
    if (integral && i - start <= 10) {
      // Up to 10 characters ("-999999999", "9999999999") is exact in a double.
      const negative = text.charCodeAt(start) === 0x2d;
      value = 0;
      for (let k = negative ? start + 1 : start; k < i; k++) value = value * 10 + (text.charCodeAt(k) - 0x30);
      if (negative) value = -value;
    } else {
      value = Number(text.slice(start, i));
    }
    if ((value | 0) === value && !Object.is(value, -0)) {
      this.byte(TAG_INT32);
      this.leb(((value << 1) ^ (value >> 31)) >>> 0);
    } else {
      this.ensure(9);
      this.out[this.pos++] = TAG_FLOAT64;
      this.scratch.setFloat64(0, value, true);
      for (let k = 0; k < 8; k++) this.out[this.pos++] = this.scratch.getUint8(k);
    }
    return true;
  }
}

/** JSON's two-character escapes: the unit each stands for, by the character after the backslash. */
export const ESCAPES: (number | undefined)[] = [];
ESCAPES[0x22] = 0x22;
ESCAPES[0x5c] = 0x5c;
ESCAPES[0x2f] = 0x2f;
ESCAPES[0x62] = 0x08;
ESCAPES[0x66] = 0x0c;
ESCAPES[0x6e] = 0x0a;
ESCAPES[0x72] = 0x0d;
ESCAPES[0x74] = 0x09;

/** Whether a unit of `text` is above U+00FF (QuickJS then stores it as a wide string). */
function isWide(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return true;
  return false;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The four hex digits at `at` as a number, or -1. */
export function hex4(text: string, at: number): number {
  let value = 0;
  for (let k = at; k < at + 4; k++) {
    const c = text.charCodeAt(k);
    let d: number;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
    else return -1;
    value = value * 16 + d;
  }
  return value;
}

/** The key as a tagged-integer atom (a canonical array index up to 2^31 − 1), or -1 for a string atom. */
export function arrayIndexAtom(key: string): number {
  const n = key.length;
  if (n === 0 || n > 10) return -1;
  const first = key.charCodeAt(0);
  if (first < 0x30 || first > 0x39 || (first === 0x30 && n > 1)) return -1;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    value = value * 10 + (c - 0x30);
  }
  return value <= ATOM_MAX_INT ? value : -1;
}
