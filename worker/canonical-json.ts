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
  return emit(JSON.parse(text) as unknown, 0);
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
