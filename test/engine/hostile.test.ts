/**
 * Hostile programs, by class: escape and bridge abuse, CPU, memory, stack, async lifecycle, output size.
 * Each asserts the exact outcome, that nothing reached the host (host globals and prototypes unchanged,
 * no unexpected calls), and that the same engine still runs the next program. Built-ins the interrupt
 * handler never reaches run through the supervisor on real Node worker threads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallRequest, FailureReason, HostCallAnswer } from "@/contracts/engine";
import type { EngineOutcome } from "@/worker/engine";
import { spawnNodeWorker } from "@/worker/node-port";
import { SandboxSupervisor } from "@/worker/supervisor";
import { buildWorkerBundle, fakeHost, getEngine, type InputExtra, input, parseValue } from "./helpers";

type Expectation =
  | { reason: FailureReason; message?: string | RegExp }
  | { value: unknown }
  | { check: (outcome: EngineOutcome, calls: CallRequest[]) => void };

interface HostileCase {
  name: string;
  code: string;
  extra?: InputExtra;
  answer?: (req: CallRequest) => HostCallAnswer | Promise<HostCallAnswer>;
  expect: Expectation;
  /** Calls the host may see; default none beyond list_events for day "ok". */
  calls?: number;
}

const FAST: InputExtra = { limits: { timeoutMs: 300 } };
const SMALL_MEMORY: InputExtra = { limits: { memoryMb: 16, timeoutMs: 10_000 } };
const SMALL_OUTPUT: InputExtra = { limits: { outputBytes: 1024 } };
const ok = (resultJson = '{"ok":true}'): HostCallAnswer => ({ type: "ok", resultJson });

const ESCAPE: HostileCase[] = [
  {
    name: "Function constructor reaches only the guest global",
    code: `const g = constructor.constructor("return this")();
      return [g === globalThis, typeof g.process, typeof g.require, typeof g.Buffer, typeof g.module];`,
    expect: { value: [true, "undefined", "undefined", "undefined", "undefined"] },
  },
  {
    name: "binding function's constructor is the guest Function",
    code: `const F = apps.work_calendar.list_events.constructor; return typeof F("return typeof process")();`,
    expect: { value: "string" },
  },
  {
    name: "process is not defined",
    code: `return this.constructor.constructor("return process")().env`,
    expect: { reason: "Error", message: /ReferenceError: .*process.* is not defined/ },
  },
  {
    name: "error stacks show no host frames or paths",
    code: `Error.prepareStackTrace = (e, s) => s;
      let s1 = new Error("x").stack, s2 = "";
      try { await apps.notes.read_note({}); } catch (e) { s2 = String(e.stack); }
      return /node:|file:|\\/work\\/|node_modules|worker_threads/.test(s1 + s2);`,
    answer: () => ({ type: "error", name: "AppCallFailed", message: "failed", details: { reason: "x" } }),
    expect: { value: false },
    calls: 1,
  },
  {
    name: "prototype pollution stays in the guest",
    code: `Object.prototype.polluted = "yes"; Array.prototype.polluted = "yes"; Object.prototype.toString = () => "x";
      return ({}).polluted;`,
    expect: { value: "yes" },
  },
  {
    name: "Object.prototype.toJSON changes only what the guest sends",
    code: `Object.prototype.toJSON = function () { return "hijacked"; };
      await apps.work_calendar.list_events({ day: "2026-10-23" }); return 1;`,
    expect: { check: (_, calls) => expect(calls[0]?.argsJson).toBe('"hijacked"') },
    calls: 1,
  },
  {
    name: "JSON replaced wholesale",
    code: `globalThis.JSON = { stringify() { throw new Error("no") }, parse() { throw new Error("no") } };
      const r = await apps.work_calendar.list_events({ day: "ok" }); console.log(r); return r;`,
    answer: () => ok(),
    expect: { value: { ok: true } },
    calls: 1,
  },
  {
    name: "Reflect, Object and Function.prototype.call replaced",
    code: `Reflect.apply = null; Object.defineProperty = null; Object.freeze = null; Function.prototype.call = null;
      Function.prototype.apply = null; Array.prototype.push = null; String.prototype.slice = null;
      console.log([1, { a: 2 }]); return await apps.call("work_calendar.list_events", { day: "ok" });`,
    answer: () => ok(),
    expect: { value: { ok: true } },
    calls: 1,
  },
  {
    // QuickJS's own JSON.stringify keeps its cycle stack in a JS array, so the setter breaks the guest's
    // serialization (a guest error); it never reaches the host.
    name: "Array index setters on the prototype",
    code: `Object.defineProperty(Array.prototype, "0", { set() { throw new Error("setter ran"); }, configurable: true });
      console.log([1, { a: [2] }]);
      await apps.work_calendar.list_events({ day: "ok" });`,
    expect: { reason: "Error", message: "Error: setter ran" },
  },
  {
    name: "Promise.prototype.then replaced",
    code: `Promise.prototype.then = function () { throw new Error("then"); };
      return await apps.work_calendar.list_events({ day: "ok" });`,
    answer: () => ok(),
    expect: { value: { ok: true } },
    calls: 1,
  },
  {
    name: "getter on arguments issues a nested call first",
    code: `const args = { get day() { apps.notes.read_note({ id: "inner" }); return "outer"; } };
      await apps.work_calendar.list_events(args); return 1;`,
    answer: () => ok(),
    expect: {
      check: (_, calls) =>
        expect(calls.map((c) => [c.index, c.binding])).toEqual([
          [0, "notes.read_note"],
          [1, "work_calendar.list_events"],
        ]),
    },
    calls: 2,
  },
  {
    name: "Proxy arguments whose trap throws",
    code: `await apps.work_calendar.list_events(new Proxy({}, { ownKeys() { throw new Error("trap"); } }));`,
    expect: { reason: "Error", message: "Error: trap" },
  },
  {
    name: "Proxy arguments whose trap loops",
    code: `await apps.work_calendar.list_events(new Proxy({}, { ownKeys() { for (;;) {} } }));`,
    extra: FAST,
    expect: { reason: "Timeout" },
  },
  {
    name: "Symbol.toPrimitive and functions in the return value",
    code: `return { [Symbol.toPrimitive]() { throw new Error("x"); }, f() {}, v: 1 };`,
    expect: { value: { v: 1 } },
  },
  {
    name: "thrown plain object",
    code: `throw { message: "not an error", code: 7 };`,
    expect: { reason: "Error", message: "Uncaught { message: 'not an error', code: 7 }" },
  },
  {
    name: "thrown symbol",
    code: `throw Symbol("s");`,
    expect: { reason: "Error", message: "Uncaught Symbol(s)" },
  },
  {
    name: "error whose message getter throws",
    code: `const e = new Error("m"); Object.defineProperty(e, "message", { get() { throw 1; } }); throw e;`,
    expect: { reason: "Error", message: "Error" },
  },
  {
    name: "error whose name getter loops",
    code: `const e = new Error("m"); Object.defineProperty(e, "name", { get() { for (;;) {} } }); throw e;`,
    extra: FAST,
    expect: { reason: "Timeout" },
  },
  {
    name: "error with a huge name is cut",
    code: `const e = new Error("m"); Object.defineProperty(e, "name", { get() { return "N".repeat(1e6); } }); throw e;`,
    expect: { check: (o) => expect(o).toMatchObject({ reason: "Error", message: expect.stringMatching(/^N{4000}$/) }) },
  },
  {
    name: "unknown and prototype binding names",
    code: `const out = [];
      for (const n of ["__proto__.x", "constructor", "toString", "x".repeat(100000)]) {
        try { await apps.call(n, {}); } catch (e) { out.push(e.name); }
      }
      return [out, typeof apps.work_calendar.__proto__, typeof apps.hasOwnProperty];`,
    expect: { value: [["TypeError", "TypeError", "TypeError", "TypeError"], "undefined", "undefined"] },
  },
  {
    name: "bindings are not constructors and apps is frozen",
    code: `apps.work_calendar.list_events = () => 1; delete apps.notes;
      let e1; try { new apps.work_calendar.list_events({}); } catch (e) { e1 = e.name; }
      return [e1, Object.isFrozen(apps), typeof apps.notes];`,
    expect: { value: ["TypeError", true, "object"] },
  },
  {
    name: "oversized arguments are refused inside the guest",
    code: `await apps.work_calendar.list_events({ day: "x".repeat(2 * 1024 * 1024) });`,
    expect: { reason: "Error", message: /^RangeError: arguments of apps\.work_calendar\.list_events are too large/ },
  },
  {
    name: "__proto__ keys in arguments do not pollute the host",
    code: `await apps.work_calendar.list_events(JSON.parse('{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"p": 1}}}'));
      return 1;`,
    answer: () => ok(),
    expect: {
      check: (_, calls) =>
        expect(calls[0]?.argsJson).toBe('{"__proto__":{"polluted":1},"constructor":{"prototype":{"p":1}}}'),
    },
    calls: 1,
  },
  {
    name: "dynamic import and eval stay inside",
    code: `let r; try { await import("node:fs"); r = "imported"; } catch (e) { r = e.name; }
      return [r, eval("typeof process"), typeof globalThis.WebAssembly, typeof SharedArrayBuffer];`,
    expect: {
      check: (o) => {
        const [r, ...rest] = parseValue(o) as string[];
        expect(r).not.toBe("imported");
        expect(rest).toEqual(["undefined", "undefined", "undefined"]);
      },
    },
  },
];

const CPU: HostileCase[] = [
  { name: "infinite loop", code: `for (;;) {}`, extra: FAST, expect: { reason: "Timeout" } },
  { name: "ReDoS", code: `return /^(a+)+$/.test("a".repeat(40) + "b");`, extra: FAST, expect: { reason: "Timeout" } },
  {
    name: "microtask flood",
    code: `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});`,
    extra: FAST,
    // Each job's promise waits on the next one's, so the chain grows as fast as jobs run: which limit
    // ends it first depends on the machine's speed. Either way the flood is stopped.
    expect: {
      check: (outcome) => {
        expect(outcome.status).toBe("failed");
        expect(["Timeout", "Memory"]).toContain((outcome as { reason?: string }).reason);
      },
    },
  },
  { name: "await loop", code: `for (;;) await null;`, extra: FAST, expect: { reason: "Timeout" } },
  {
    name: "sort comparator loop",
    code: `[3, 2, 1].sort(() => { for (;;) {} });`,
    extra: FAST,
    expect: { reason: "Timeout" },
  },
  {
    name: "CPU spread over many calls adds up",
    code: `for (let i = 0; i < 100; i++) { const t = Date.now(); let x = 0; for (let j = 0; j < 3e5; j++) x += j;
        await apps.work_calendar.list_events({ day: "ok" }); }`,
    extra: { limits: { timeoutMs: 150 } },
    answer: () => ok(),
    expect: { reason: "Timeout" },
    calls: 100,
  },
  {
    name: "catching the interrupt is impossible",
    code: `for (;;) { try { for (;;) {} } catch (e) {} }`,
    extra: FAST,
    expect: { reason: "Timeout" },
  },
];

const MEMORY: HostileCase[] = [
  {
    name: "typed arrays",
    code: `const k = []; for (;;) k.push(new Float64Array(1 << 18));`,
    extra: SMALL_MEMORY,
    expect: { reason: "Memory" },
  },
  {
    name: "one huge typed array",
    code: `return new Uint8Array(512 * 1024 * 1024).length;`,
    extra: SMALL_MEMORY,
    expect: { reason: "Memory" },
  },
  {
    name: "growing strings",
    code: `const k = []; let s = "y".repeat(1 << 16); for (;;) { s = s + s.slice(0, 4096); k.push(s + "!"); }`,
    extra: SMALL_MEMORY,
    expect: { reason: "Memory" },
  },
  {
    name: "many small objects",
    code: `const k = []; for (;;) k.push({ a: k.length, b: [k.length] });`,
    extra: SMALL_MEMORY,
    expect: { reason: "Memory" },
  },
  {
    name: "big Map",
    code: `const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });`,
    extra: SMALL_MEMORY,
    expect: { reason: "Memory" },
  },
  { name: "Array fill", code: `return Array(1e8).fill(0).length;`, extra: SMALL_MEMORY, expect: { reason: "Memory" } },
  {
    // The heap runs out inside a promise job, which QuickJS turns into a rejection: the chain ends and the
    // job queue drains, and the run is still a memory failure (not a promise that can never settle).
    name: "a promise chain that grows until memory runs out in its jobs",
    code: `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});`,
    extra: SMALL_MEMORY,
    expect: { reason: "Memory" },
  },
  {
    name: "a result too large for the sandbox is a catchable call failure",
    code: `try { await apps.work_calendar.list_events({ day: "big" }); } catch (e) { return [e.name, e.details.reason]; }`,
    extra: SMALL_MEMORY,
    answer: () => ok(JSON.stringify("z".repeat(6 * 1024 * 1024))),
    expect: { value: ["AppCallFailed", "ResultTooLarge"] },
    calls: 1,
  },
];

const STACK: HostileCase[] = [
  {
    name: "deep recursion uncaught",
    code: `const f = (n) => f(n + 1) + 1; return f(0);`,
    expect: { reason: "Error", message: "InternalError: stack overflow" },
  },
  {
    name: "recursive Proxy get trap",
    code: `const p = new Proxy({}, { get: (t, k) => p[k] }); return p.x;`,
    expect: { reason: "Error", message: "InternalError: stack overflow" },
  },
  {
    name: "recursive getter",
    code: `const o = { get x() { return this.x; } }; try { o.x; } catch (e) { return e.message; }`,
    expect: { value: "stack overflow" },
  },
  {
    name: "recursive toJSON in call arguments",
    code: `const o = { toJSON() { return { o: this }; } };
      try { await apps.work_calendar.list_events(o); } catch (e) { return e.message; }`,
    // Caught in the guest where the host stack is deep enough (worker threads); on the main thread the
    // host stack runs out first and the run fails the same way, uncaught.
    expect: {
      check: (o) =>
        o.status === "completed"
          ? expect(parseValue(o)).toBe("stack overflow")
          : expect(o).toMatchObject({ reason: "Error", message: "InternalError: stack overflow" }),
    },
  },
  {
    name: "deeply nested source",
    code: `return eval("[".repeat(20000) + "]".repeat(20000)).length;`,
    expect: { reason: "Error", message: /stack overflow/ },
  },
  {
    name: "deeply nested JSON",
    code: `return JSON.parse("[".repeat(20000) + "]".repeat(20000)).length;`,
    expect: { reason: "Error", message: /stack overflow/ },
  },
];

const ASYNC: HostileCase[] = [
  {
    name: "unhandled rejections are ignored",
    code: `Promise.reject(new Error("x")); (async () => { throw 1; })(); return "done";`,
    expect: { value: "done" },
  },
  {
    name: "fire-and-forget calls do not hold the run",
    code: `apps.work_calendar.list_events({ day: "slow" }); return "early";`,
    answer: () => new Promise(() => undefined),
    expect: { value: "early" },
    calls: 1,
  },
  {
    name: "a program waiting on nothing fails instead of hanging",
    code: `await new Promise(() => {});`,
    expect: { reason: "Error", message: "the program is waiting for a promise that can never settle" },
  },
  {
    name: "thousands of calls",
    code: `const r = await Promise.all(Array.from({ length: 3000 }, (_, i) => apps.call("work_calendar.list_events", { i })));
      return r.reduce((a, b) => a + b, 0);`,
    answer: (req) => ok(String((JSON.parse(req.argsJson) as { i: number }).i)),
    expect: { value: (2999 * 3000) / 2 },
    calls: 3000,
  },
  {
    name: "a thenable return value that never settles",
    code: `return { then() {} };`,
    expect: { reason: "Error", message: "the program is waiting for a promise that can never settle" },
  },
];

const OUTPUT: HostileCase[] = [
  {
    name: "huge return value",
    code: `return "x".repeat(5000);`,
    extra: SMALL_OUTPUT,
    expect: { reason: "OutputTooLarge" },
  },
  {
    name: "huge return value through toJSON",
    code: `return { toJSON() { return "é".repeat(3000); } };`,
    extra: SMALL_OUTPUT,
    expect: { reason: "OutputTooLarge" },
  },
  {
    name: "log flood is cut with a marker",
    code: `for (let i = 0; i < 100000; i++) console.log("spam", i); return "ok";`,
    extra: SMALL_OUTPUT,
    expect: {
      check: (o) => {
        expect(parseValue(o)).toBe("ok");
        expect(o.logs.at(-1)?.text).toBe("[log output truncated: more than 1024 bytes]");
      },
    },
  },
  {
    name: "text() flood",
    code: `for (;;) text("x".repeat(100));`,
    extra: SMALL_OUTPUT,
    expect: { reason: "OutputTooLarge" },
  },
  {
    name: "huge json()",
    code: `json({ a: "x".repeat(5000) }); return 1;`,
    extra: SMALL_OUTPUT,
    expect: { reason: "OutputTooLarge" },
  },
  {
    name: "logging a huge object stops formatting early",
    code: `const o = {}; for (let i = 0; i < 50000; i++) o["k" + i] = { v: i }; console.log(o); return "ok";`,
    extra: SMALL_OUTPUT,
    expect: { check: (o) => expect(parseValue(o)).toBe("ok") },
  },
  {
    name: "logging does not run getters",
    code: `console.log({ get boom() { for (;;) {} } }); return "ok";`,
    extra: FAST,
    expect: { check: (o) => expect(o.logs[0]?.text).toBe("{ boom: [Getter] }") },
  },
];

/** A failure reason comes only from what the host observed, never from the error a program throws. */
const FORGED: HostileCase[] = [
  {
    name: "arguments nested deeper than the bridge allows are an invalid_arguments call failure naming the limit",
    code: `let a = 1; for (let i = 0; i < 600; i++) a = [a];
      try { await apps.work_calendar.list_events({ day: a }); } catch (e) { return [e.name, e.details.reason, e.details.maxDepth, e.message]; }`,
    expect: {
      value: [
        "AppCallFailed",
        "invalid_arguments",
        512,
        "arguments of apps.work_calendar.list_events are nested deeper than 512 levels, the most a call can carry; nothing was sent",
      ],
    },
  },
  {
    name: "an error named InternalError: out of memory is an Error, not Memory",
    code: `throw Object.assign(new Error("out of memory"), { name: "InternalError" });`,
    expect: { reason: "Error", message: "InternalError: out of memory" },
  },
  {
    name: "QuickJS's own InternalError type with the out-of-memory text",
    code: `throw new InternalError("out of memory");`,
    expect: { reason: "Error", message: "InternalError: out of memory" },
  },
  {
    name: "the out-of-memory text thrown after an await",
    code: `await apps.work_calendar.list_events({ day: "ok" }); throw Object.assign(new Error("out of memory"), { name: "InternalError" });`,
    expect: { reason: "Error", message: "InternalError: out of memory" },
    calls: 1,
  },
  {
    name: "the engine's own memory message",
    code: `throw new Error("the program ran out of memory (limit 32 MiB)");`,
    expect: { reason: "Error", message: "Error: the program ran out of memory (limit 32 MiB)" },
  },
  {
    name: "a forged interrupt is not a Timeout",
    code: `throw Object.assign(new Error("interrupted"), { name: "InternalError" });`,
    expect: { reason: "Error", message: "InternalError: interrupted" },
  },
  {
    name: "an error named Timeout",
    code: `throw Object.assign(new Error("the program ran longer than 2000 ms"), { name: "Timeout" });`,
    expect: { reason: "Error" },
  },
  {
    name: "an error named OutputTooLarge",
    code: `throw Object.assign(new Error("the return value is larger than 65536 bytes"), { name: "OutputTooLarge" });`,
    expect: { reason: "Error", message: "OutputTooLarge: the return value is larger than 65536 bytes" },
  },
  {
    name: "an error named Cancelled",
    code: `throw Object.assign(new Error("the run was cancelled"), { name: "Cancelled" });`,
    expect: { reason: "Error", message: "Cancelled: the run was cancelled" },
  },
  {
    name: "a thrown plain object shaped like an outcome",
    code: `throw { status: "failed", reason: "Memory", name: "InternalError", message: "out of memory" };`,
    expect: { reason: "Error" },
  },
  {
    name: "a caught real out-of-memory still lets the program go on",
    code: `try { new Uint8Array(512 * 1024 * 1024); } catch (e) { return [e.name, e.message]; }`,
    extra: SMALL_MEMORY,
    expect: { value: ["InternalError", "out of memory"] },
  },
];

const hostBaseline = {
  globals: Object.getOwnPropertyNames(globalThis).sort(),
  objectProto: Object.getOwnPropertyNames(Object.prototype).sort(),
  arrayProto: Object.getOwnPropertyNames(Array.prototype).sort(),
  promiseThen: Promise.prototype.then,
  stringify: JSON.stringify,
};

async function runCase(c: HostileCase): Promise<void> {
  const engine = await getEngine();
  const host = fakeHost(c.answer ?? (() => ok()));
  const outcome = await engine.run(input(c.code, c.extra), host);
  const e = c.expect;
  if ("reason" in e) {
    expect(outcome, JSON.stringify(outcome).slice(0, 300)).toMatchObject({ status: "failed", reason: e.reason });
    if (e.message !== undefined) {
      const message = (outcome as { message: string }).message;
      if (typeof e.message === "string") expect(message).toBe(e.message);
      else expect(message).toMatch(e.message);
    }
  } else if ("value" in e) {
    expect(parseValue(outcome)).toEqual(e.value);
  } else {
    e.check(outcome, host.calls);
  }
  expect(host.calls.length).toBeLessThanOrEqual(c.calls ?? 0);
  expect(
    parseValue(await engine.run(input("return [typeof apps, ({}).polluted ?? null, Date.now()]"), fakeHost())),
  ).toEqual(["object", null, input("").time]);
}

const CLASSES: [string, HostileCase[]][] = [
  ["escape and bridge abuse", ESCAPE],
  ["CPU", CPU],
  ["memory", MEMORY],
  ["stack", STACK],
  ["async lifecycle", ASYNC],
  ["output size", OUTPUT],
  ["forged failure reasons", FORGED],
];

describe.each(CLASSES)("hostile: %s", (_, cases) => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    await runCase(c);
  });
});

describe("hostile: nothing leaked into the host", () => {
  it("keeps host globals and prototypes unchanged", () => {
    expect(Object.getOwnPropertyNames(globalThis).sort()).toEqual(hostBaseline.globals);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(hostBaseline.objectProto);
    expect(Object.getOwnPropertyNames(Array.prototype).sort()).toEqual(hostBaseline.arrayProto);
    expect(Promise.prototype.then).toBe(hostBaseline.promiseThen);
    expect(JSON.stringify).toBe(hostBaseline.stringify);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("counts at least 40 hostile programs", () => {
    expect(CLASSES.reduce((n, [, cases]) => n + cases.length, 0)).toBeGreaterThanOrEqual(40);
  });
});

describe("hostile: uninterruptible built-ins and cancel (Node worker threads)", () => {
  let supervisor: SandboxSupervisor;
  beforeAll(() => {
    buildWorkerBundle();
    supervisor = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), graceMs: 300 });
  });
  afterAll(() => supervisor.dispose());

  it.each([
    ["huge-length indexOf", "return Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1);"],
    ["big BigInt toString", "return (7n ** 300000n).toString().length;"],
    ["sparse array join", "return (new Array(1e9) + '').length;"],
  ])("%s → Timeout, worker replaced", async (_name, code) => {
    const outcome = await supervisor.run(input(code, { limits: { timeoutMs: 200 } }), fakeHost());
    expect(outcome).toMatchObject({ status: "failed", reason: "Timeout" });
    expect(parseValue(await supervisor.run(input("return 'next'"), fakeHost()))).toBe("next");
  });

  it("cancel with calls pending", async () => {
    const controller = new AbortController();
    const host = fakeHost(() => new Promise(() => undefined));
    const pending = supervisor.run(
      input(`await Promise.all([1, 2, 3].map((i) => apps.call("work_calendar.list_events", { i })));`),
      { call: host.call, signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ status: "failed", reason: "Cancelled" });
    expect(host.calls).toHaveLength(3);
    expect(parseValue(await supervisor.run(input("return 'next'"), fakeHost()))).toBe("next");
  });

  it("deeply nested source is a guest error in a worker thread", async () => {
    const outcome = await supervisor.run(
      input(`try { eval("[".repeat(20000) + "]".repeat(20000)); } catch (e) { return e.message; }`),
      fakeHost(),
    );
    expect(parseValue(outcome)).toBe("stack overflow");
  });
});
