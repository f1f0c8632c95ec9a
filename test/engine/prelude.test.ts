/**
 * The split prelude and prepared contexts: parts compiled on first use (inspector, Date strings, app-call
 * errors) behave the same when the program has already wiped globals and booby-trapped prototypes, and a
 * context prepared while the engine is idle is as fresh as one made for the run (nothing of an earlier run
 * is visible), gives the same outcome, and is disposed when the run is cancelled before it starts.
 */
import { describe, expect, it } from "vitest";
import { preparedRunCount } from "@/worker/engine";
import { fakeHost, getEngine, input, parseValue } from "./helpers";

const idle = () => new Promise((resolve) => setTimeout(resolve, 20));

async function run(code: string) {
  const engine = await getEngine();
  return engine.run(input(code), fakeHost());
}

/** Values made before any tampering, so the probe itself does not need the globals it removes. */
const PREPARE = `
  const G = globalThis, D = Date, sym = Symbol("s"), def = Object.defineProperty, keys = Reflect.ownKeys(G);
  const iteratorKey = Symbol.iterator, RangeError = G.RangeError;
  const OP = Object.prototype, AP = Array.prototype, FP = Function.prototype, RP = RegExp.prototype;
  const m = new Map([[1, { a: [1, 2] }], ["k", new Set(["x"])]]), d0 = new Date(0), typed = new Uint8Array(3);
  const values = [1, "two", { three: 3, "needs quote": [null, undefined] }, -0, 10n, sym, () => 1, class Named {}];
  const err = new TypeError("bad"), plain = { __proto__: null, z: 1 };
  const keep = ["console", "apps", "text", "json", "undefined"];
`;

/** Removes every global the program may delete and traps what a lazily compiled part might consult. */
const TAMPER = `
  for (let i = 0; i < keys.length; i++) if (keep.indexOf(keys[i]) === -1) { try { delete G[keys[i]]; } catch (e) {} }
  const boom = function () { throw new RangeError("tampered"); };
  const trap = (target, key) => def(target, key, { __proto__: null, value: boom, configurable: true, writable: true });
  trap(AP, iteratorKey); trap(FP, "call"); trap(FP, "apply"); trap(FP, "bind"); trap(RP, "test");
  const names = ["format", "describe", "parseUTC", "apply", "define", "inspect", "date", "appError", "get", "set", "value"];
  for (let i = 0; i < names.length; i++) def(OP, names[i], { __proto__: null, get: boom, set: boom, configurable: true });
`;

const USE = `
  console.log(values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7]);
  console.log(m, typed, err, plain, d0);
  console.warn("%s has %d items %o %j%%", "list", 3, { k: [1] }, { j: 1 });
  text({ nested: { deep: { deeper: { deepest: 1 } } } });
  console.log(\`\${d0}\`, d0.toLocaleString(), d0.toDateString(), d0.toTimeString(), d0.toLocaleTimeString());
  console.log(new D("2026-01-02T03:04").getTime(), D.parse("2026-01-02T03:04:05"), D(), d0.getYear(), d0.getTimezoneOffset());
  let caught;
  try { await apps.notes.read_note({ id: 1 }); } catch (e) { caught = e; }
  console.error(caught.name, caught.message, caught.details, caught);
  throw { thrown: [1, "x"] };
`;

describe("lazily compiled prelude parts", () => {
  it("format, date strings, app errors and uncaught values exactly as without tampering", async () => {
    const clean = await run(PREPARE + USE);
    const tampered = await run(PREPARE + TAMPER + USE);
    expect(clean).toMatchObject({ status: "failed", reason: "Error", message: "Uncaught { thrown: [ 1, 'x' ] }" });
    expect(clean.logs.map((l) => l.level)).toEqual(["log", "log", "warn", "log", "log", "error"]);
    expect(clean.logs[2]?.text).toBe('list has 3 items { k: [ 1 ] } {"j":1}%');
    expect(clean.logs[3]?.text).toBe(
      "Thu Jan 01 1970 00:00:00 GMT+0000 01/01/1970, 12:00:00 AM Thu Jan 01 1970 00:00:00 GMT+0000 12:00:00 AM",
    );
    expect(clean.logs[5]?.text).toBe(
      "AppCallDenied denied by policy { policy: 'deny' } AppCallDenied: denied by policy",
    );
    expect(tampered).toEqual(clean);
  });

  it("reports compile errors with line and column without compiling anything else first", async () => {
    const outcome = await run("const a = 1;\nconst = 2;");
    expect(outcome).toMatchObject({ status: "failed", reason: "Error" });
    expect((outcome as { message: string }).message).toMatch(/^SyntaxError: .*\(line 2, column \d+\)$/);
  });
});

describe("prepared contexts", () => {
  it("start runs while idle, fresh and with the same outcome as a context made for the run", async () => {
    const engine = await getEngine();
    const dirty = `globalThis.leak = 1; Object.prototype.polluted = 1; Date.prototype.toString = () => "x";
      Math.random = () => 4; console.log = null; return 1;`;
    const probe = `return [typeof leak, ({}).polluted ?? null, String(new Date(0)), Math.random(), typeof console.log];`;
    await idle();
    const before = preparedRunCount();
    expect(parseValue(await engine.run(input(dirty), fakeHost()))).toBe(1);
    await idle();
    const warm = await engine.run(input(probe), fakeHost());
    expect(preparedRunCount()).toBe(before + 2);
    await idle();
    // Back to back, no idle task between: two prepared contexts are kept, so the second run still has one...
    expect(parseValue(await engine.run(input(dirty), fakeHost()))).toBe(1);
    const second = await engine.run(input(probe), fakeHost());
    expect(preparedRunCount()).toBe(before + 4);
    // ...and a third run in the same burst makes its own.
    expect(parseValue(await engine.run(input(dirty), fakeHost()))).toBe(1);
    const cold = await engine.run(input(probe), fakeHost());
    expect(preparedRunCount()).toBe(before + 4);
    expect(second).toEqual(warm);
    expect(parseValue(warm)).toEqual([
      "undefined",
      null,
      "Thu Jan 01 1970 00:00:00 GMT+0000",
      expect.any(Number),
      "function",
    ]);
    expect(cold).toEqual(warm);
  });

  it("disposes a prepared context when the run is cancelled before it starts", async () => {
    const engine = await getEngine();
    await idle();
    const before = preparedRunCount();
    const controller = new AbortController();
    controller.abort();
    const outcome = await engine.run(input("return 1"), { ...fakeHost(), signal: controller.signal });
    expect(outcome).toMatchObject({ status: "failed", reason: "Cancelled" });
    await idle();
    expect(parseValue(await engine.run(input("return 2"), fakeHost()))).toBe(2);
    expect(preparedRunCount()).toBe(before + 2);
  });
});
