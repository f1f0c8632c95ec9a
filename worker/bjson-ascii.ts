/**
 * The JSON → QuickJS binary object transcoder's fast path for pure-ASCII text (what JSON.stringify writes for
 * ASCII data, the usual tool result). The text is copied once into bytes (`TextEncoder.encodeInto`, which
 * also tells whether every unit is ASCII) and parsed by one loop with its containers on an explicit stack,
 * so the scan reads a byte array and keeps its cursor and output position in locals; strings without
 * escapes are copied with `Uint8Array.set`. It writes exactly what `jsonToBinary` (bjson.ts) writes for the
 * same text: the same grammar, atom table order, string and number encodings, and count patching
 * (test/engine/bjson.test.ts compares the two byte for byte, and result-value.ts checks this path against
 * QuickJS's own encoder once per module). Text with any non-ASCII unit goes to `jsonToBinary`.
 * Measured on the 5,000-row bigresult text: worker/PROGRESS.md (issue 16, h22e).
 */
import {
  arrayIndexAtom,
  atomTable,
  ESCAPES,
  hex4,
  jsonToBinary,
  TAG_ARRAY,
  TAG_FALSE,
  TAG_FLOAT64,
  TAG_INT32,
  TAG_NULL,
  TAG_OBJECT,
  TAG_STRING,
  TAG_TRUE,
} from "./bjson";

/** `asciiToBinary`'s answer for text with a unit above U+007F (the general transcoder takes it). */
export const NOT_ASCII = "not-ascii";
/** Per property position, how many keys are remembered for the in-place match of rows of one shape. */
const KEY_SLOTS = 64;
/** The input byte buffer is kept between calls up to this size (larger texts get one of their own). */
const KEEP_INPUT_BYTES = 1 << 20;

const encoder = typeof TextEncoder === "function" ? new TextEncoder() : undefined;
let kept = new Uint8Array(0);
const scratch = new DataView(new ArrayBuffer(8));
let fastCount = 0;

/** How many texts the fast path has transcoded so far (for tests). */
export function asciiPathCount(): number {
  return fastCount;
}

/**
 * An ASCII JSON text covering what this path writes (escapes, a wide string made by `\u` escapes, ints,
 * floats, -0, a long string, a count over 127, integer and repeated keys in rows of one shape); result-value.ts
 * compares this path's encoding of it with QuickJS's own, byte for byte, before a module uses it.
 */
export const SELF_CHECK_ASCII = JSON.stringify({
  n: null,
  t: [true, false],
  i: [0, 1, -1, 63, -64, 64, 2147483647, -2147483648, 2147483648, -0.0, 1.5, -2.5e-300, 1e21],
  s: ["", "ascii", 'tab\tquote"back\\slash/\n', "x".repeat(70), "\u00e9\u20ac\ud83d\ude00"],
  k: { "0": 1, "2147483647": 3, "2147483648": 4, "01": 5, "-1": 6, 'a"b': 7, "\u20ac": 8 },
  rows: Array.from({ length: 130 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 2 === 0 })),
}).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** Strict JSON text → the two parts of its binary encoding (see `jsonToBinary`), by the fastest path that applies. */
export function transcodeJson(text: string, maxDepth: number): [Uint8Array, Uint8Array] | undefined {
  const fast = asciiToBinary(text, maxDepth);
  return fast === NOT_ASCII ? jsonToBinary(text, maxDepth) : fast;
}

/** The ASCII fast path alone: the parts, undefined if not strict JSON (or too deep), `NOT_ASCII` otherwise. */
export function asciiToBinary(text: string, maxDepth: number): [Uint8Array, Uint8Array] | undefined | typeof NOT_ASCII {
  const n = text.length;
  if (!encoder) return NOT_ASCII;
  let b: Uint8Array;
  if (n + 1 <= KEEP_INPUT_BYTES) {
    if (kept.length < n + 1) kept = new Uint8Array(Math.min(KEEP_INPUT_BYTES, Math.max(n + 1, kept.length * 2, 4096)));
    b = kept;
  } else {
    b = new Uint8Array(n + 1);
  }
  const { read, written } = encoder.encodeInto(text, b.subarray(0, n));
  if (read !== n || written !== n) return NOT_ASCII;
  // A 0 after the text ends every scan: no JSON token or string may contain it raw.
  b[n] = 0;
  return parse(text, b, n, maxDepth);
}

function parse(text: string, b: Uint8Array, n: number, maxDepth: number): [Uint8Array, Uint8Array] | undefined {
  let out: Uint8Array = new Uint8Array(Math.max(64, n + (n >> 1)));
  let pos = 0;
  let i = 0;
  let depth = 0;
  // Per open container (index = depth): array or object, where its one-byte count is, values so far.
  const isArray = new Uint8Array(maxDepth + 2);
  const countAt = new Int32Array(maxDepth + 2);
  const counts = new Int32Array(maxDepth + 2);
  const atoms = new Map<string, number>();
  const atomList: string[] = [];
  // Per property position, the last unescaped key seen there: where its text starts, its length, its reference.
  const keyStart = new Int32Array(KEY_SLOTS);
  const keyLength = new Int32Array(KEY_SLOTS).fill(-1);
  const keyRef = new Int32Array(KEY_SLOTS);
  let needKey = false;

  for (;;) {
    let c: number;
    if (needKey) {
      needKey = false;
      c = b[i] as number;
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++i] as number;
      if (c !== 0x22) return undefined;
      const start = i + 1;
      const slot = counts[depth] as number;
      let ref = -1;
      if (slot < KEY_SLOTS) {
        const length = keyLength[slot] as number;
        if (length >= 0 && b[start + length] === 0x22) {
          const from = keyStart[slot] as number;
          let k = 0;
          while (k < length && b[start + k] === b[from + k]) k += 1;
          if (k === length) {
            ref = keyRef[slot] as number;
            i = start + length + 1;
          }
        }
      }
      if (ref < 0) {
        let j = start;
        let e = b[j] as number;
        while (e !== 0x22 && e !== 0x5c && e >= 0x20) e = b[++j] as number;
        let key: string;
        let escaped = false;
        if (e === 0x22) {
          key = text.slice(start, j);
        } else if (e === 0x5c) {
          const end = escapedEnd(text, j);
          if (end < 0) return undefined;
          key = unescapeText(text, start, end);
          escaped = true;
          j = end;
        } else {
          return undefined;
        }
        i = j + 1;
        const index = arrayIndexAtom(key);
        if (index >= 0) {
          ref = index * 2 + 1;
        } else {
          let atom = atoms.get(key);
          if (atom === undefined) {
            atom = atomList.length + 1;
            atoms.set(key, atom);
            atomList.push(key);
          }
          ref = atom * 2;
        }
        if (!escaped && slot < KEY_SLOTS) {
          keyStart[slot] = start;
          keyLength[slot] = j - start;
          keyRef[slot] = ref;
        }
      }
      if (pos + 5 > out.length) out = grow(out, pos, 5);
      while (ref >= 0x80) {
        out[pos++] = (ref & 0x7f) | 0x80;
        ref >>>= 7;
      }
      out[pos++] = ref;
      c = b[i] as number;
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++i] as number;
      if (c !== 0x3a) return undefined;
      i += 1;
    }

    // One value at i.
    c = b[i] as number;
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++i] as number;
    if (pos + 16 > out.length) out = grow(out, pos, 16);
    if (c === 0x22) {
      const start = i + 1;
      // Short strings (under 64 bytes: a one-byte length header) are copied while they are scanned.
      if (pos + 66 > out.length) out = grow(out, pos, 66);
      const limit = Math.min(start + 63, n);
      let j = start;
      let p = pos + 2;
      let e = b[j] as number;
      while (j < limit && e !== 0x22 && e !== 0x5c && e >= 0x20) {
        out[p++] = e;
        e = b[++j] as number;
      }
      if (e === 0x22) {
        out[pos] = TAG_STRING;
        out[pos + 1] = (j - start) * 2;
        pos = p;
        i = j + 1;
      } else {
        while (e !== 0x22 && e !== 0x5c && e >= 0x20) e = b[++j] as number;
        if (e === 0x22) {
          const length = j - start;
          if (pos + length + 6 > out.length) out = grow(out, pos, length + 6);
          out[pos++] = TAG_STRING;
          let header = length * 2;
          while (header >= 0x80) {
            out[pos++] = (header & 0x7f) | 0x80;
            header >>>= 7;
          }
          out[pos++] = header;
          out.set(b.subarray(start, j), pos);
          pos += length;
          i = j + 1;
        } else if (e === 0x5c) {
          const end = escapedEnd(text, j);
          if (end < 0) return undefined;
          const value = unescapeText(text, start, end);
          if (pos + value.length * 2 + 6 > out.length) out = grow(out, pos, value.length * 2 + 6);
          out[pos++] = TAG_STRING;
          pos = putString(out, pos, value);
          i = end + 1;
        } else {
          return undefined;
        }
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (depth >= maxDepth) return undefined;
      depth += 1;
      const array = c === 0x5b;
      out[pos++] = array ? TAG_ARRAY : TAG_OBJECT;
      isArray[depth] = array ? 1 : 0;
      countAt[depth] = pos;
      counts[depth] = 0;
      out[pos++] = 0;
      i += 1;
      let d = b[i] as number;
      while (d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) d = b[++i] as number;
      if (d === (array ? 0x5d : 0x7d)) {
        i += 1;
        depth -= 1;
      } else {
        if (!array) needKey = true;
        continue;
      }
    } else if (c === 0x74) {
      if (b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65) return undefined;
      out[pos++] = TAG_TRUE;
      i += 4;
    } else if (c === 0x66) {
      if (b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) return undefined;
      out[pos++] = TAG_FALSE;
      i += 5;
    } else if (c === 0x6e) {
      if (b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c) return undefined;
      out[pos++] = TAG_NULL;
      i += 4;
    } else {
      // A number (strict grammar): int32 when it is one (not -0), else float64.
      const start = i;
      if (c === 0x2d) c = b[++i] as number;
      if (c === 0x30) c = b[++i] as number;
      else if (c >= 0x31 && c <= 0x39) {
        do c = b[++i] as number;
        while (c >= 0x30 && c <= 0x39);
      } else return undefined;
      let integral = true;
      if (c === 0x2e) {
        integral = false;
        c = b[++i] as number;
        if (c < 0x30 || c > 0x39) return undefined;
        do c = b[++i] as number;
        while (c >= 0x30 && c <= 0x39);
      }
      if (c === 0x65 || c === 0x45) {
        integral = false;
        c = b[++i] as number;
        if (c === 0x2b || c === 0x2d) c = b[++i] as number;
        if (c < 0x30 || c > 0x39) return undefined;
        do c = b[++i] as number;
        while (c >= 0x30 && c <= 0x39);
      }
      let value: number;
      if (integral && i - start <= 10) {
        // Up to 10 characters ("-999999999", "9999999999") is exact in a double.
        const negative = b[start] === 0x2d;
        value = 0;
        for (let k = negative ? start + 1 : start; k < i; k++) value = value * 10 + ((b[k] as number) - 0x30);
        if (negative) value = -value;
      } else {
        value = Number(text.slice(start, i));
      }
      if ((value | 0) === value && !Object.is(value, -0)) {
        out[pos++] = TAG_INT32;
        let v = ((value << 1) ^ (value >> 31)) >>> 0;
        while (v >= 0x80) {
          out[pos++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        out[pos++] = v;
      } else {
        out[pos++] = TAG_FLOAT64;
        scratch.setFloat64(0, value, true);
        for (let k = 0; k < 8; k++) out[pos++] = scratch.getUint8(k);
      }
    }

    // After a value: the next one in its container, the container's end (then after it), or the text's end.
    for (;;) {
      c = b[i] as number;
      while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++i] as number;
      if (depth === 0) {
        if (i !== n) return undefined;
        fastCount += 1;
        return [atomTable(atomList), out.subarray(0, pos)];
      }
      i += 1;
      const count = (counts[depth] as number) + 1;
      counts[depth] = count;
      if (c === 0x2c) {
        if (isArray[depth] === 0) needKey = true;
        break;
      }
      if (c !== (isArray[depth] === 1 ? 0x5d : 0x7d)) return undefined;
      const at = countAt[depth] as number;
      if (count < 0x80) {
        out[at] = count;
      } else {
        // A count over 127 needs more bytes than the one reserved: the content moves up to make room.
        let extra = 0;
        for (let v = count >>> 7; v > 0; v >>>= 7) extra += 1;
        if (pos + extra > out.length) out = grow(out, pos, extra);
        out.copyWithin(at + 1 + extra, at + 1, pos);
        pos += extra;
        let v = count;
        let p = at;
        while (v >= 0x80) {
          out[p++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        out[p] = v;
      }
      depth -= 1;
    }
  }
}

function grow(out: Uint8Array, pos: number, bytes: number): Uint8Array {
  let size = out.length * 2;
  while (size < pos + bytes) size *= 2;
  const grown = new Uint8Array(size);
  grown.set(out.subarray(0, pos));
  return grown;
}

/** The closing quote's index of a string with an escape at `at`, or -1 for a bad escape or control character. */
function escapedEnd(text: string, at: number): number {
  let i = at;
  for (;;) {
    if (i >= text.length) return -1;
    const c = text.charCodeAt(i);
    if (c === 0x22) return i;
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      const e = text.charCodeAt(i + 1);
      if (e === 0x75) {
        if (hex4(text, i + 2) < 0) return -1;
        i += 6;
      } else if (ESCAPES[e] !== undefined) {
        i += 2;
      } else {
        return -1;
      }
    } else {
      i += 1;
    }
  }
}

/** The value of a checked escaped string between `start` and `end`. */
function unescapeText(text: string, start: number, end: number): string {
  const units: number[] = [];
  for (let i = start; i < end; ) {
    const c = text.charCodeAt(i);
    if (c !== 0x5c) {
      units.push(c);
      i += 1;
    } else if (text.charCodeAt(i + 1) === 0x75) {
      units.push(hex4(text, i + 2));
      i += 6;
    } else {
      units.push(ESCAPES[text.charCodeAt(i + 1)] as number);
      i += 2;
    }
  }
  let value = "";
  for (let i = 0; i < units.length; i += 8192) value += String.fromCharCode(...units.slice(i, i + 8192));
  return value;
}

/** A string's length header and units (Latin-1 bytes, or UTF-16LE when a unit is above U+00FF) at `pos`. */
function putString(out: Uint8Array, at: number, value: string): number {
  let wide = false;
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0xff) wide = true;
  let pos = at;
  let header = value.length * 2 + (wide ? 1 : 0);
  while (header >= 0x80) {
    out[pos++] = (header & 0x7f) | 0x80;
    header >>>= 7;
  }
  out[pos++] = header;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    out[pos++] = c & 0xff;
    if (wide) out[pos++] = c >>> 8;
  }
  return pos;
}
