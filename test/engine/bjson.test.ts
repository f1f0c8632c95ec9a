/**
 * The host's JSON → QuickJS binary transcoder (worker/bjson.ts, its ASCII fast path worker/bjson-ascii.ts)
 * and the engine's binary result path
 * (worker/result-value.ts): byte-for-byte against the build's own encoder, a seeded round trip over many
 * generated texts (Unicode, escapes, surrogates, numbers, hostile and numeric keys, duplicates, whitespace)
 * compared inside QuickJS with its own JSON.parse (prototypes, key order, descriptors, -0), strict refusal of
 * non-JSON, and big results through the engine (hostile prototypes, memory cap, fallbacks).
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinParts, jsonToBinary, SELF_CHECK_JSON } from "@/worker/bjson";
import { asciiPathCount, asciiToBinary, NOT_ASCII, SELF_CHECK_ASCII, transcodeJson } from "@/worker/bjson-ascii";
import { CANONICAL_MAX_DEPTH } from "@/worker/canonical-json";
import { moduleFor } from "@/worker/quickjs-module";
import { BINARY_MIN_CHARS, binaryResultCount } from "@/worker/result-value";
import { fakeHost, getEngine, input, parseValue } from "./helpers";

/** Deep comparison inside QuickJS: "" when equal, else where they differ. */
const SAME_SOURCE = `(function same(a, b, path) {
  if (typeof a !== typeof b) return path + ": typeof " + typeof a + " vs " + typeof b;
  if (a === null || typeof a !== "object") return Object.is(a, b) ? "" : path + ": " + String(a) + " vs " + String(b);
  if (Array.isArray(a) !== Array.isArray(b)) return path + ": array vs not";
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return path + ": prototype";
  if (Object.isExtensible(a) !== Object.isExtensible(b)) return path + ": extensible";
  const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length) return path + ": " + ka.length + " keys vs " + kb.length;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return path + ": key " + String(ka[i]) + " vs " + String(kb[i]);
    const da = Object.getOwnPropertyDescriptor(a, ka[i]), db = Object.getOwnPropertyDescriptor(b, kb[i]);
    if (da.writable !== db.writable || da.enumerable !== db.enumerable || da.configurable !== db.configurable)
      return path + "." + String(ka[i]) + ": descriptor";
    const inner = same(da.value, db.value, path + "." + String(ka[i]));
    if (inner) return inner;
  }
  return "";
})`;

// Seeded generator of JSON texts ------------------------------------------------------------------

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const UNITS = [
  "a",
  "Z",
  "0",
  " ",
  "~",
  "\u007f",
  "\u0080",
  "\u00e9",
  "\u00ff",
  "\u0100",
  "\u20ac",
  "\u4e2d",
  "\ud83d\ude00",
  "\ud800",
  "\udfff",
  "\ufffd",
  "\ufeff",
  '"',
  "\\",
  "/",
  "\n",
  "\t",
  "\b",
  "\f",
  "\r",
  "\u0000",
  "\u001f",
];
const KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "length",
  "then",
  "v",
  "",
  "0",
  "1",
  "7",
  "01",
  "-1",
  "1.5",
  "2147483647",
  "2147483648",
  "4294967294",
  "4294967295",
  "1e3",
  " 1",
  "id",
  "name",
  "\u00e9t\u00e9",
  "\u20ac",
  "k\ud800",
];
const NUMBERS = [
  "0",
  "-0",
  "0.0",
  "-0.0",
  "1",
  "-1",
  "63",
  "-64",
  "64",
  "2147483647",
  "-2147483648",
  "2147483648",
  "-2147483649",
  "4294967296",
  "9007199254740993",
  "1e3",
  "1E+3",
  "100e-2",
  "1.5",
  "-2.5e-300",
  "5e-324",
  "1.7976931348623157e308",
  "1e21",
  "123456789012",
  "0.1",
  "3.141592653589793",
  "1e400",
  "-1e-400",
  "9999999999",
  "-9999999999",
];

function pick<T>(rnd: () => number, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)] as T;
}

function space(rnd: () => number): string {
  return rnd() < 0.85 ? "" : pick(rnd, [" ", "\n", "\t", "\r\n  "]);
}

/** A JSON string literal: each unit raw or escaped at random (quote, backslash and controls always escaped). */
function stringText(rnd: () => number, value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const ch = value[i] as string;
    const short: Record<string, string> = {
      '"': '\\"',
      "\\": "\\\\",
      "\n": "\\n",
      "\t": "\\t",
      "\b": "\\b",
      "\f": "\\f",
      "\r": "\\r",
    };
    if (short[ch] !== undefined && (c < 0x20 || ch === '"' || ch === "\\" || rnd() < 0.7)) out += short[ch];
    else if (c < 0x20 || rnd() < 0.15)
      out += `\\u${c
        .toString(16)
        .padStart(4, rnd() < 0.5 ? "0" : "0")
        .toUpperCase()}`;
    else if (ch === "/" && rnd() < 0.3) out += "\\/";
    else out += ch;
  }
  return `${out}"`;
}

function randomString(rnd: () => number): string {
  const n = rnd() < 0.1 ? 0 : Math.floor(rnd() * (rnd() < 0.1 ? 300 : 12));
  let s = "";
  const latin = rnd() < 0.5;
  for (let i = 0; i < n; i++) s += latin ? pick(rnd, UNITS.slice(0, 9)) : pick(rnd, UNITS);
  return s;
}

function valueText(rnd: () => number, depth: number): string {
  const r = rnd();
  if (depth > 0 && r < 0.2) {
    const n = depth <= 2 && rnd() < 0.05 ? 130 + Math.floor(rnd() * 200) : Math.floor(rnd() * 6);
    const items = Array.from({ length: n }, () => space(rnd) + valueText(rnd, depth - 1) + space(rnd));
    return `[${items.join(",")}${n === 0 ? space(rnd) : ""}]`;
  }
  if (depth > 0 && r < 0.4) {
    const n = depth <= 2 && rnd() < 0.05 ? 130 + Math.floor(rnd() * 50) : Math.floor(rnd() * 6);
    const entries = Array.from({ length: n }, () => {
      const key = rnd() < 0.6 ? pick(rnd, KEYS) : randomString(rnd);
      return `${space(rnd)}${stringText(rnd, key)}${space(rnd)}:${space(rnd)}${valueText(rnd, depth - 1)}${space(rnd)}`;
    });
    return `{${entries.join(",")}${n === 0 ? space(rnd) : ""}}`;
  }
  if (r < 0.55) return stringText(rnd, randomString(rnd));
  if (r < 0.85) return pick(rnd, NUMBERS);
  return pick(rnd, ["true", "false", "null"]);
}

// QuickJS side --------------------------------------------------------------------------------------

let ctx: QuickJSContext;
let same: QuickJSHandle;
let parse: QuickJSHandle;
let dispose: () => void;

beforeAll(async () => {
  const module = await moduleFor(64);
  const runtime = module.quickjs.newRuntime();
  ctx = runtime.newContext();
  same = ctx.unwrapResult(ctx.evalCode(SAME_SOURCE));
  parse = ctx.unwrapResult(ctx.evalCode("(s) => JSON.parse(s)"));
  dispose = () => {
    same.dispose();
    parse.dispose();
    ctx.dispose();
    runtime.dispose();
  };
});
afterAll(() => dispose());

function quickjsParse(text: string): QuickJSHandle {
  const s = ctx.newString(text);
  try {
    return ctx.unwrapResult(ctx.callFunction(parse, ctx.undefined, s));
  } finally {
    s.dispose();
  }
}

function quickjsEncode(value: QuickJSHandle): Uint8Array {
  const encoded = ctx.encodeBinaryJSON(value);
  const bytes = ctx.getArrayBuffer(encoded);
  const copy = bytes.value.slice();
  bytes.dispose();
  encoded.dispose();
  return copy;
}

function decodeOurs(text: string): QuickJSHandle {
  const parts = jsonToBinary(text, CANONICAL_MAX_DEPTH);
  if (!parts) throw new Error(`not transcoded: ${text.slice(0, 200)}`);
  const buffer = ctx.newArrayBuffer(joinParts(parts).buffer as ArrayBuffer);
  try {
    return ctx.decodeBinaryJSON(buffer);
  } finally {
    buffer.dispose();
  }
}

/** "" when QuickJS's decode of our bytes equals its JSON.parse of the text. */
function difference(text: string): string {
  const ours = decodeOurs(text);
  // A raw lone surrogate does not survive quickjs-emscripten's UTF-8 copy of the text (the binary path keeps
  // it exactly), so QuickJS's JSON.parse gets those escaped: inside a JSON string it means the same unit.
  const theirs = quickjsParse(text.replace(/[\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`));
  const root = ctx.newString("$");
  try {
    const result = ctx.unwrapResult(ctx.callFunction(same, ctx.undefined, ours, theirs, root));
    const text = ctx.getString(result);
    result.dispose();
    return text;
  } finally {
    root.dispose();
    ours.dispose();
    theirs.dispose();
  }
}

describe("bjson transcoder", () => {
  it("writes what this QuickJS build's encoder writes, byte for byte", () => {
    const rows = JSON.stringify(
      Array.from({ length: 300 }, (_, i) => ({ id: i, name: `user ${i}`, score: (i * 37) % 100, ok: i % 2 === 0 })),
    );
    for (const text of [SELF_CHECK_JSON, rows, "null", '"\u20ac"', "[[[]]]", '{"a":{"a":{"a":1}}}']) {
      const parsed = quickjsParse(text);
      try {
        expect(Array.from(joinParts(jsonToBinary(text, 8) ?? []))).toEqual(Array.from(quickjsEncode(parsed)));
      } finally {
        parsed.dispose();
      }
    }
  });

  it("round-trips 2,000 generated texts exactly as QuickJS's JSON.parse reads them", () => {
    const rnd = prng(20261201);
    let checked = 0;
    for (let i = 0; i < 2000; i++) {
      const text = space(rnd) + valueText(rnd, 1 + (i % 5)) + space(rnd);
      expect(() => JSON.parse(text), text).not.toThrow();
      expect(difference(text), text.slice(0, 300)).toBe("");
      checked += 1;
    }
    expect(checked).toBe(2000);
  });

  it("round-trips hand-picked edge cases", () => {
    const cases = [
      '{"__proto__":{"polluted":1},"a":1}',
      '{"a":1,"a":2,"b":3,"a":4}',
      '{"b":1,"1":2,"0":3,"2147483648":4,"4294967295":5,"01":6}',
      '{"\\u005f_proto__":1}',
      `[${NUMBERS.join(",")}]`,
      '"\\ud83d\\ude00\\ud800x\\udfff"',
      '"\\u00e9\\u00ff\\u0000"',
      `"${"\u00e9".repeat(5000)}"`,
      `"${"\u20ac".repeat(5000)}"`,
      `{"${"k".repeat(3000)}":1}`,
      `[${Array.from({ length: 20000 }, (_, i) => i * 7919 - 50000).join(",")}]`,
      `${"[".repeat(CANONICAL_MAX_DEPTH)}${"]".repeat(CANONICAL_MAX_DEPTH)}`,
      ' \t\r\n[ 1 , { } , [ ] , "" ] \n',
    ];
    for (const text of cases) expect(difference(text), text.slice(0, 200)).toBe("");
  });

  it("refuses anything that is not strict JSON, and nesting past its depth", () => {
    const bad = [
      "",
      " ",
      "[1,]",
      '{"a":1,}',
      "[1 2]",
      "{'a':1}",
      "{a:1}",
      "NaN",
      "Infinity",
      "-Infinity",
      "01",
      "1.",
      ".5",
      "-",
      "+1",
      "1e",
      "1e+",
      "0x10",
      '"\u0001"',
      '"\\x41"',
      '"\\u12"',
      '"\\u12G4"',
      '"abc',
      "[",
      "{",
      '{"a"}',
      '{"a":}',
      "tru",
      "nul",
      "true false",
      "[1]]",
      '"a"b',
      "/**/1",
      "[1,\n]",
      '{"a" 1}',
      "\u00a01",
    ];
    for (const text of bad) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(jsonToBinary(text, 16), text).toBeUndefined();
      expect(transcodeJson(text, 16), text).toBeUndefined();
      // Inside a container too (the fast path parses containers on a stack of its own).
      expect(transcodeJson(`[0,${text}]`, 16), text).toBeUndefined();
    }
    for (const transcode of [jsonToBinary, transcodeJson]) {
      expect(transcode("[[[1]]]", 3)).toBeDefined();
      expect(transcode("[[[[1]]]]", 3)).toBeUndefined();
      expect(transcode('{"a":{"b":{"c":1}}}', 3)).toBeDefined();
      expect(transcode('{"a":{"b":{"c":{}}}}', 3)).toBeUndefined();
    }
  });
});

/** The text with every unit above U+007F written as a `\u` escape (the same JSON value, all ASCII). */
function asAscii(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

describe("the transcoder's ASCII fast path", () => {
  it("writes exactly what the general transcoder writes, over 2,000 generated ASCII texts", () => {
    const rnd = prng(20261202);
    let fast = 0;
    for (let i = 0; i < 2000; i++) {
      const text = asAscii(space(rnd) + valueText(rnd, 1 + (i % 5)) + space(rnd));
      const ours = asciiToBinary(text, CANONICAL_MAX_DEPTH);
      expect(Array.isArray(ours), text.slice(0, 200)).toBe(true);
      expect(Array.from(joinParts(ours as Uint8Array[])), text.slice(0, 200)).toEqual(
        Array.from(joinParts(jsonToBinary(text, CANONICAL_MAX_DEPTH) ?? [])),
      );
      fast += 1;
    }
    expect(fast).toBe(2000);
  });

  it("writes what this QuickJS build's encoder writes for its self-check text and for rows", () => {
    const rows = JSON.stringify(
      Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `user ${i}`, mail: `u${i}@x.example`, score: i % 100 })),
    );
    const long = JSON.stringify({ text: "y".repeat(9000), list: Array.from({ length: 200 }, (_, i) => `s${i}`) });
    for (const text of [SELF_CHECK_ASCII, rows, long, "-0", "[-0,0.5]", '{"a":1,"b":"\\u20ac"}']) {
      const parsed = quickjsParse(text);
      try {
        const ours = asciiToBinary(text, 8);
        expect(Array.isArray(ours), text.slice(0, 100)).toBe(true);
        expect(Array.from(joinParts(ours as Uint8Array[])), text.slice(0, 100)).toEqual(
          Array.from(quickjsEncode(parsed)),
        );
      } finally {
        parsed.dispose();
      }
    }
  });

  it("leaves text with any non-ASCII unit to the general transcoder", () => {
    for (const text of [SELF_CHECK_JSON, '"\u00e9"', '["a","\u20ac"]', '{"\ud83d\ude00":1}', '"\ud800"']) {
      expect(asciiToBinary(text, 8), text).toBe(NOT_ASCII);
      expect(transcodeJson(text, 8), text).toEqual(jsonToBinary(text, 8));
    }
    expect(/[^\u0000-\u007f]/.test(SELF_CHECK_ASCII)).toBe(false);
  });
});

// Through the engine -------------------------------------------------------------------------------

const ROWS = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i} \u20ac`, score: (i * 37) % 100 }));

describe("big call results through the engine", () => {
  it("reach the program decoded, equal to its own JSON.parse of the same text, with own __proto__ keys", async () => {
    const text = JSON.stringify({ __proto__x: 0, rows: ROWS }).replace(
      '"__proto__x":0',
      '"__proto__":{"polluted":1},"7":7,"then":1',
    );
    expect(text.length).toBeGreaterThan(BINARY_MIN_CHARS);
    const engine = await getEngine();
    const before = binaryResultCount();
    const code = `const same = ${SAME_SOURCE};
      const r = await apps.work_calendar.list_events({});
      const e = JSON.parse(${JSON.stringify(text)});
      return [same(r, e, "$"), Object.getPrototypeOf(r) === Object.prototype, Object.hasOwn(r, "__proto__"),
        ({}).polluted === undefined, Object.keys(r).slice(0, 4), r.rows.length];`;
    const outcome = await engine.run(
      input(code),
      fakeHost(() => ({ type: "ok", resultJson: text })),
    );
    expect(parseValue(outcome)).toEqual(["", true, true, true, ["7", "__proto__", "then", "rows"], 400]);
    expect(binaryResultCount()).toBe(before + 1);
  });

  it("reach the program through the ASCII fast path when the text is all ASCII, equal to its JSON.parse", async () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}`, euro: "\u20ac", score: i * 0.5 }));
    const text = asAscii(JSON.stringify({ __proto__x: 0, rows })).replace(
      '"__proto__x":0',
      '"__proto__":{"polluted":1},"7":7,"then":1',
    );
    expect(/[^\u0000-\u007f]/.test(text)).toBe(false);
    const engine = await getEngine();
    const [binaryBefore, asciiBefore] = [binaryResultCount(), asciiPathCount()];
    const code = `const same = ${SAME_SOURCE};
      const r = await apps.work_calendar.list_events({});
      const e = JSON.parse(${JSON.stringify(text)});
      return [same(r, e, "$"), Object.hasOwn(r, "__proto__"), ({}).polluted === undefined, r.rows[3].euro, r.rows.length];`;
    const outcome = await engine.run(
      input(code),
      fakeHost(() => ({ type: "ok", resultJson: text })),
    );
    expect(parseValue(outcome)).toEqual(["", true, true, "\u20ac", 400]);
    expect([binaryResultCount(), asciiPathCount()]).toEqual([binaryBefore + 1, asciiBefore + 1]);
  });

  it("are not disturbed by a program that trapped the prototypes the prelude might touch", async () => {
    const text = JSON.stringify(ROWS);
    const engine = await getEngine();
    const before = binaryResultCount();
    const code = `Object.defineProperty(Object.prototype, "v", { get() { return "trapped"; }, set() { throw new Error("set"); } });
      globalThis.JSON = { parse() { return "trapped"; } };
      const r = await apps.work_calendar.list_events({});
      return [Array.isArray(r), r.length, r[0].name, r[399].id, Object.hasOwn(r[0], "v")];`;
    const outcome = await engine.run(
      input(code),
      fakeHost(() => ({ type: "ok", resultJson: text })),
    );
    expect(parseValue(outcome)).toEqual([true, 400, "row 0 \u20ac", 399, false]);
    expect(binaryResultCount()).toBe(before + 1);
  });

  it("keep the text path for small results, non-JSON and nesting past the transcoder's depth", async () => {
    const engine = await getEngine();
    const before = binaryResultCount();
    const small = await engine.run(
      input("return (await apps.work_calendar.list_events({})).a"),
      fakeHost(() => ({ type: "ok", resultJson: '{"a":1}' })),
    );
    expect(parseValue(small)).toBe(1);
    const broken = await engine.run(
      input("return await apps.work_calendar.list_events({})"),
      fakeHost(() => ({ type: "ok", resultJson: `[${"1,".repeat(2000)}]` })),
    );
    expect(broken).toMatchObject({ status: "failed", reason: "Error" });
    expect((broken as { message: string }).message).toMatch(/^SyntaxError/);
    const depth = CANONICAL_MAX_DEPTH + 10;
    const deep = `${"[".repeat(depth)}${"0,".repeat(2000)}0${"]".repeat(depth)}`;
    const nested = await engine.run(
      input(
        "let r = await apps.work_calendar.list_events({}), d = 0; while (Array.isArray(r)) { r = r[0]; d++; } return d;",
      ),
      fakeHost(() => ({ type: "ok", resultJson: deep })),
    );
    expect(parseValue(nested)).toBe(depth);
    expect(binaryResultCount()).toBe(before);
  });

  it("still fail cleanly under the run's memory limit, and the engine runs on", async () => {
    const engine = await getEngine();
    const limits = { memoryMb: 16, timeoutMs: 10_000 };
    // ~1.5 M characters of empty arrays: the text fits the heap, the 500,000 arrays do not.
    const text = `[${"[],".repeat(500_000)}[]]`;
    const outcome = await engine.run(
      input("const r = await apps.work_calendar.list_events({}); return r.length;", { limits }),
      fakeHost(() => ({ type: "ok", resultJson: text })),
    );
    expect(outcome).toMatchObject({ status: "failed", reason: "Memory" });
    const next = await engine.run(
      input("return (await apps.work_calendar.list_events({})).length", { limits }),
      fakeHost(() => ({ type: "ok", resultJson: JSON.stringify(ROWS) })),
    );
    expect(parseValue(next)).toBe(400);
  });
});
