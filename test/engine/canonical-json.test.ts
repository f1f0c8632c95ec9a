/**
 * canonicalJson's fast check (worker/canonical-json.ts `isCanonicalJson`): text already in canonical form is
 * recognised by one scan and returned as it is, anything the check is not sure of takes the full parse, and
 * both paths agree on every input (including the ones the check refuses).
 */
import { describe, expect, it } from "vitest";
import { CANONICAL_MAX_DEPTH, canonicalJson, isCanonicalJson } from "@/worker/canonical-json";

/** The full path alone: parse, sort keys, write (what canonicalJson did before the check). */
function slowCanonical(text: string): string {
  const emit = (value: unknown): string => {
    if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
    if (Array.isArray(value)) return `[${value.map(emit).join(",")}]`;
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${emit(record[key])}`)
      .join(",")}}`;
  };
  return emit(JSON.parse(text));
}

const CANONICAL = [
  "{}",
  "[]",
  '{"i":3}',
  '{"a":1,"b":[1,2,{"c":null,"d":true}],"e":"x y"}',
  '{"A":1,"B":2,"a":3}',
  '{"10":1,"9":2}',
  '{"":0,"a":-12}',
  '"plain"',
  "0",
  "-5",
  "123456789012345",
  "false",
  '{"name":"café ☕"}',
  '{"__proto__":{"x":1}}',
];

const NOT_SURE = [
  '{"b":1,"a":2}',
  '{"a":1,"a":2}',
  '{"9":1,"10":2}',
  '{"a":1.5}',
  '{"a":1e3}',
  '{"a":1E3}',
  "1234567890123456",
  "-0",
  "1 ",
  '{"a":"line\\nbreak"}',
  '{"a":"quote\\"d"}',
  '{"a":"\\u00e9"}',
  '{"a":"\ud83d\ude00"}',
  '{ "a": 1 }',
  "[1, 2]",
  `${"[".repeat(100)}${"]".repeat(100)}`,
];

describe("canonicalJson's fast check", () => {
  it("recognises canonical text and returns it unchanged", () => {
    for (const text of CANONICAL) {
      expect(isCanonicalJson(text), text).toBe(true);
      expect(canonicalJson(text)).toBe(text);
      expect(slowCanonical(text)).toBe(text);
    }
  });

  it("leaves unsorted keys, duplicates, escapes, surrogates, floats, big numbers, spaces and deep nesting to the full path", () => {
    for (const text of NOT_SURE) {
      expect(isCanonicalJson(text), text).toBe(false);
      expect(canonicalJson(text), text).toBe(slowCanonical(text));
    }
    expect(canonicalJson('{"b":1,"a":{"d":2,"c":1.0}}')).toBe('{"a":{"c":1,"d":2},"b":1}');
  });

  it("never accepts invalid JSON, which still throws", () => {
    for (const text of ["", "{", '{"a"}', '{"a":}', '{"a":1,}', "[1,]", "tru", "nul", '"open', '{"a":1}x', "01", "-"]) {
      expect(isCanonicalJson(text), text).toBe(false);
      expect(() => canonicalJson(text), text).toThrow(SyntaxError);
    }
  });

  it("still refuses nesting past the limit", () => {
    const deep = `${"[".repeat(CANONICAL_MAX_DEPTH + 1)}${"]".repeat(CANONICAL_MAX_DEPTH + 1)}`;
    expect(() => canonicalJson(deep)).toThrow(RangeError);
  });

  it("agrees with the full path on generated arguments", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)] as T;
    const value = (depth: number): unknown => {
      const kind = depth > 3 ? pick(["n", "s", "b"]) : pick(["n", "s", "b", "o", "a", "z"]);
      if (kind === "n") return pick([0, 1, -7, 42, 2 ** 53, 0.5, -1e-7, 1e21]);
      if (kind === "s") return pick(["", "x", "é", "a\nb", '"', "\\", "\u2028", "\ud800"]);
      if (kind === "b") return random() < 0.5;
      if (kind === "z") return null;
      if (kind === "a") return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      const keys = Array.from({ length: Math.floor(random() * 4) }, () => pick(["a", "b", "B", "10", "9", "é", ""]));
      return Object.fromEntries(keys.map((key) => [key, value(depth + 1)]));
    };
    let fast = 0;
    for (let i = 0; i < 3000; i++) {
      const text = JSON.stringify(value(0));
      if (isCanonicalJson(text)) fast += 1;
      expect(canonicalJson(text), text).toBe(slowCanonical(text));
    }
    expect(fast).toBeGreaterThan(100);
  });
});
