/**
 * Hostile programs that hand the bridge one very long string (2e7 characters, 64 MiB of memory): logged,
 * written through text()/json(), thrown, returned. The prelude cuts such strings inside the guest to what the
 * host keeps anyway, so the run ends with the outcome a person can use (a cut log line with the host's
 * marker, OutputTooLarge, an Error naming the string's start) instead of `Memory` from copying it out.
 * Near the limits, the cut lines are the ones the host makes from the whole text.
 */
import { describe, expect, it } from "vitest";
import { truncateUtf8 } from "@/worker/canonical-json";
import type { EngineOutcome } from "@/worker/engine";
import { fakeHost, getEngine, type InputExtra, input, parseValue } from "./helpers";

const CAP = 65536;
const HUGE: InputExtra = { limits: { memoryMb: 64, timeoutMs: 10_000, outputBytes: CAP } };
const MARKER = `[log output truncated: more than ${CAP} bytes]`;
const OUTPUT_TOO_LARGE = `text() and json() output is larger than ${CAP} bytes`;

async function run(code: string, extra: InputExtra = HUGE): Promise<EngineOutcome> {
  const engine = await getEngine();
  const outcome = await engine.run(input(code, extra), fakeHost());
  // The same engine still runs the next program.
  expect(parseValue(await engine.run(input("return 1 + 1"), fakeHost()))).toBe(2);
  return outcome;
}

function failed(outcome: EngineOutcome) {
  return { status: outcome.status, reason: (outcome as { reason?: string }).reason };
}

// 2e7 one-byte characters (20 MB in the guest), or 1e7 characters QuickJS keeps in two bytes each (20 MB).
describe.each([
  ["x", 2e7],
  ["中", 1e7],
])("hostile: %j repeated %d times crossing the bridge", (ch, times) => {
  const BIG = `${JSON.stringify(ch)}.repeat(${times})`;
  /** What the host keeps of a line that starts with `prefix` and goes on with the long string. */
  const logged = (prefix: string) => truncateUtf8(prefix + ch.repeat(CAP), CAP);
  /** The failure message of an error text that starts with `prefix` and goes on with the long string. */
  const message = (prefix: string) => (prefix + ch.repeat(4000)).slice(0, 4000);

  it.each(["log", "info", "warn", "error", "debug"])("console.%s of it is cut with the marker", async (level) => {
    const o = await run(`console.${level}(${BIG}); return "ok";`);
    expect(parseValue(o)).toBe("ok");
    expect(o.logs).toEqual([
      { level: level === "debug" ? "log" : level, text: logged("") },
      { level: "warn", text: MARKER },
    ]);
  });

  it.each([
    ["inside a logged object", `{ big: ${BIG} }`, "{\n  big: '"],
    ["among other arguments (and again through %s)", `"a", ${BIG}, 1); console.log("%s!", ${BIG}`, "a "],
    ["as a format string", `"%s" + ${BIG}, "a"`, "a"],
    ["as a logged Error's message", `new Error(${BIG})`, "Error: "],
    // An identifier-like key is shown bare, as Node shows it; any other key is quoted.
    ["as a key of a logged object", `{ [${BIG}]: 1 }`, ch === "x" ? "{\n  " : "{\n  '"],
  ])("%s is cut with the marker", async (_name, args, prefix) => {
    const o = await run(`console.log(${args}); return "ok";`);
    expect(parseValue(o)).toBe("ok");
    expect(o.logs).toEqual([
      { level: "log", text: logged(prefix) },
      { level: "warn", text: MARKER },
    ]);
  });

  it.each([
    ["text() of it", `text(${BIG});`],
    ["text() of an object holding it", `text({ big: ${BIG} });`],
    ["json() of it", `json(${BIG});`],
  ])("%s is OutputTooLarge", async (_name, code) => {
    const o = await run(`${code} return "ok";`);
    expect(failed(o)).toEqual({ status: "failed", reason: "OutputTooLarge" });
    expect((o as { message: string }).message).toBe(OUTPUT_TOO_LARGE);
  });

  // JSON.stringify has to build the whole text inside the sandbox (twice the string's size): a clear Memory
  // failure naming the limit, not a silent or empty output.
  it("json() of an object holding it fails with Memory", async () => {
    const o = await run(`json({ big: ${BIG} }); return "ok";`);
    expect(failed(o)).toEqual({ status: "failed", reason: "Memory" });
    expect((o as { message: string }).message).toBe("the program ran out of memory (limit 64 MiB)");
  });

  it.each([
    ["it", `${BIG}`],
    ["an object holding it", `{ big: ${BIG} }`],
  ])("returning %s is OutputTooLarge", async (_name, value) => {
    const o = await run(`return ${value};`);
    expect(failed(o)).toEqual({ status: "failed", reason: "OutputTooLarge" });
    expect((o as { message: string }).message).toMatch(`the return value is larger than ${CAP} bytes`);
  });

  it.each([
    ["it", `${BIG}`, "Uncaught '"],
    ["an object holding it", `{ big: ${BIG} }`, "Uncaught {\n  big: '"],
    ["an Error with it as message", `new Error(${BIG})`, "Error: "],
    ["an Error with it as name", `Object.assign(new Error("m"), { name: ${BIG} })`, ""],
    ["a TypeError with it as message, after an await", `(await 0, new TypeError(${BIG}))`, "TypeError: "],
  ])("throwing %s is an Error naming its start", async (_name, value, prefix) => {
    const o = await run(`throw ${value};`);
    expect(failed(o)).toEqual({ status: "failed", reason: "Error" });
    expect((o as { message: string }).message).toBe(message(prefix));
  });

  it("the cutting holds when the program replaced String.prototype.slice and Reflect.apply", async () => {
    const o = await run(
      `String.prototype.slice = String.prototype.substring = String.prototype.substr = () => "";
      Function.prototype.apply = Reflect.apply = () => "";
      console.log(${BIG}); return "ok";`,
    );
    expect(parseValue(o)).toBe("ok");
    expect(o.logs).toEqual([
      { level: "log", text: logged("") },
      { level: "warn", text: MARKER },
    ]);
  });
});

/** The host's own cut of a whole line (canonical-json.ts's truncateUtf8), for lines just over the limit. */
describe("log lines just over the limit are cut where the host cut them before", () => {
  const SMALL: InputExtra = { limits: { outputBytes: 1024 } };
  const marker = "[log output truncated: more than 1024 bytes]";

  it.each([
    ["ASCII one over", `"x".repeat(1025)`, "x".repeat(1025)],
    ["a pair across the limit", `"x".repeat(1023) + "😀" + "y".repeat(5)`, `${"x".repeat(1023)}😀yyyyy`],
    ["a pair right after the cut", `"x".repeat(1024) + "😀"`, `${"x".repeat(1024)}😀`],
    ["two-byte characters", `"é".repeat(600)`, "é".repeat(600)],
    ["a short object with a long string", `{ a: 1, s: "x".repeat(1100) }`, `{\n  a: 1,\n  s: '${"x".repeat(1100)}'\n}`],
    ["a short object with a short string", `{ a: 1, s: "x".repeat(50) }`, `{ a: 1, s: '${"x".repeat(50)}' }`],
    [
      "nested objects",
      `{ a: { b: { c: "x\\n".repeat(700) } } }`,
      `{\n  a: {\n    b: {\n      c: '${"x\\n".repeat(700)}'\n    }\n  }\n}`,
    ],
    [
      "a long string after a long one",
      `["x".repeat(500), "y".repeat(900)]`,
      `[\n  '${"x".repeat(500)}',\n  '${"y".repeat(900)}'\n]`,
    ],
  ])("%s", async (_name, value, whole) => {
    const text = truncateUtf8(whole, 1024);
    const engine = await getEngine();
    const o = await engine.run(input(`console.log(${value}); return "ok";`, SMALL), fakeHost());
    expect(parseValue(o)).toBe("ok");
    const lines = o.logs.map((l) => l.text);
    expect(lines[0]).toBe(text);
    if (lines.length > 1) expect(lines).toEqual([text, marker]);
  });

  it("a second line gets only what the first left, cut the same way", async () => {
    const engine = await getEngine();
    const o = await engine.run(
      input(`console.log("x".repeat(1000)); console.warn("y".repeat(5000)); console.log("z"); return "ok";`, SMALL),
      fakeHost(),
    );
    expect(o.logs).toEqual([
      { level: "log", text: "x".repeat(1000) },
      { level: "warn", text: "y".repeat(24) },
      { level: "warn", text: marker },
    ]);
  });
});
