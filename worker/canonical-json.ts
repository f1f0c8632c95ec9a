/**
 * Canonical JSON: the form in which call arguments are compared and stored. Object keys are sorted by
 * UTF-16 code units, numbers and strings are written as `JSON.stringify` writes them, no whitespace.
 * Runtime-neutral and dependency-free; the engine uses it before a call leaves the sandbox and the server
 * uses it to compare a call with its record.
 */

/** Deepest nesting accepted; deeper input is refused rather than risking the host's stack. */
export const CANONICAL_MAX_DEPTH = 512;

/** Re-serializes a JSON text with sorted object keys. Throws a SyntaxError or RangeError on bad input. */
export function canonicalJson(text: string): string {
  if (isCanonicalJson(text)) return text;
  return emit(JSON.parse(text) as unknown, 0);
}

/** Nesting the fast check follows; deeper text takes the full path (which refuses past CANONICAL_MAX_DEPTH). */
const QUICK_MAX_DEPTH = 64;

/**
 * Whether `text` is already what `canonicalJson` would write, by one scan and no parse: strict JSON without
 * whitespace, every object's keys in ascending UTF-16 order, strings without escapes or surrogates (written
 * the same by every JSON.stringify), numbers only as integers of at most 15 digits (likewise). False means
 * "not sure", never "invalid": the caller then parses. Most call arguments pass (a program's JSON.stringify of
 * small objects), so most calls skip the parse and re-serialization.
 */
export function isCanonicalJson(text: string): boolean {
  const end = scanValue(text, 0, 0);
  return end === text.length;
}

/** Scans one value at `at`; returns the index after it, or -1 if it is outside the canonical subset. */
function scanValue(text: string, at: number, depth: number): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) return scanString(text, at);
  if (c === 0x7b) return depth >= QUICK_MAX_DEPTH ? -1 : scanObject(text, at, depth + 1);
  if (c === 0x5b) return depth >= QUICK_MAX_DEPTH ? -1 : scanArray(text, at, depth + 1);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return scanInteger(text, at);
  for (const word of WORDS) if (text.startsWith(word, at)) return at + word.length;
  return -1;
}
const WORDS = ["true", "false", "null"];

function scanObject(text: string, at: number, depth: number): number {
  let i = at + 1;
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  let previous: string | undefined;
  for (;;) {
    const keyEnd = scanString(text, i);
    if (keyEnd < 0 || text.charCodeAt(keyEnd) !== 0x3a) return -1;
    const key = text.slice(i + 1, keyEnd - 1);
    if (previous !== undefined && !(previous < key)) return -1;
    previous = key;
    i = scanValue(text, keyEnd + 1, depth);
    if (i < 0) return -1;
    const next = text.charCodeAt(i);
    if (next === 0x7d) return i + 1;
    if (next !== 0x2c) return -1;
    i += 1;
  }
}

function scanArray(text: string, at: number, depth: number): number {
  let i = at + 1;
  if (text.charCodeAt(i) === 0x5d) return i + 1;
  for (;;) {
    i = scanValue(text, i, depth);
    if (i < 0) return -1;
    const next = text.charCodeAt(i);
    if (next === 0x5d) return i + 1;
    if (next !== 0x2c) return -1;
    i += 1;
  }
}

/** A string at `at` (which holds its opening quote) with no escape, control character or surrogate. */
function scanString(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x22) return -1;
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return -1;
  }
  return -1;
}

/** `-?(0|[1-9][0-9]*)` of at most 15 digits (every such integer is exact and written alike everywhere). */
function scanInteger(text: string, at: number): number {
  let i = text.charCodeAt(at) === 0x2d ? at + 1 : at;
  const first = i;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    i += 1;
  }
  const digits = i - first;
  if (digits === 0 || digits > 15 || (digits > 1 && text.charCodeAt(first) === 0x30)) return -1;
  if (digits === 1 && text.charCodeAt(first) === 0x30 && first !== at) return -1;
  const c = text.charCodeAt(i);
  if (c === 0x2e || c === 0x65 || c === 0x45) return -1;
  return i;
}

/** Canonical JSON of a value that is already JSON-compatible (host-side values only). */
export function canonicalJsonOf(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? "null" : canonicalJson(text);
}

function emit(value: unknown, depth: number): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (depth >= CANONICAL_MAX_DEPTH) throw new RangeError("JSON nested too deeply");
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i ? "," : "") + emit(value[i], depth + 1);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${(i ? "," : "") + JSON.stringify(key)}:${emit(record[key], depth + 1)}`;
  }
  return `${out}}`;
}

/** UTF-8 length of a string without allocating an encoder (lone surrogates count as 3 bytes). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest prefix of `text` whose UTF-8 length is at most `maxBytes` (never splits a pair). */
export function truncateUtf8(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    let width = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    let step = 1;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        width = 4;
        step = 2;
      }
    }
    if (bytes + width > maxBytes) break;
    bytes += width;
    i += step;
  }
  return text.slice(0, i);
}
