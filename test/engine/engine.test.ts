/**
 * In-process tests of the engine's program semantics: bindings, errors, logs, output, determinism,
 * pause/stop, pending-call limits and the real limits (time, memory, output), each followed by a run
 * that must still work.
 */
import { describe, expect, it } from "vitest";
import type { HostCallAnswer } from "@/contracts/engine";
import { canonicalJson } from "@/worker/canonical-json";
import { CALENDAR_PROGRAM, calendarOutcome, fakeHost, getEngine, input, parseValue, TIME } from "./helpers";

async function run(code: string, extra: Parameters<typeof input>[1] = {}, host = fakeHost()) {
  const engine = await getEngine();
  return engine.run(input(code, extra), host);
}

async function expectHealthy(): Promise<void> {
  expect(parseValue(await run("return 6 * 7"))).toBe(42);
}

describe("program semantics", () => {
  it("runs the seed calendar program against a fake host", async () => {
    const host = fakeHost();
    const outcome = await run(CALENDAR_PROGRAM, {}, host);
    expect(parseValue(outcome)).toEqual(["Quarterly review", "Offsite planning"]);
    expect(outcome.logs).toEqual([{ level: "log", text: "events 4" }]);
    expect(host.calls).toEqual([
      { index: 0, binding: "work_calendar.list_events", argsJson: '{"day":"2026-10-23"}' },
      { index: 1, binding: "work_calendar.list_events", argsJson: '{"day":"2026-10-24"}' },
    ]);
    expect(outcome.completionOrder).toEqual([0, 1]);
  });

  it("offers apps.call and names unknown bindings, including prototype names", async () => {
    const outcome = await run(`
      const a = await apps.call("work_calendar.list_events", { day: "2026-10-24" });
      const errors = [];
      for (const name of ["__proto__", "constructor", "work_calendar.nope", "constructor.prototype", 42]) {
        try { await apps.call(name, {}); } catch (e) { errors.push(e.name + ": " + e.message); }
      }
      return { n: a.structuredContent.events.length, errors, proto: typeof apps.__proto__,
        ctor: typeof apps.work_calendar.constructor, keys: Object.keys(apps) };
    `);
    expect(parseValue(outcome)).toEqual({
      n: 2,
      errors: [
        'TypeError: apps.call: unknown binding "__proto__"',
        'TypeError: apps.call: unknown binding "constructor"',
        'TypeError: apps.call: unknown binding "work_calendar.nope"',
        'TypeError: apps.call: unknown binding "constructor.prototype"',
        "TypeError: apps.call: unknown binding number",
      ],
      proto: "undefined",
      ctor: "undefined",
      keys: ["work_calendar", "notes"],
    });
  });

  it("rejects failed calls with catchable errors named after the App error", async () => {
    const outcome = await run(`
      try { await apps.notes.read_note({ id: "n1" }); }
      catch (e) { return { name: e.name, message: e.message, details: e.details, isError: e instanceof Error,
        proto: Object.getPrototypeOf(e.details) === Object.prototype }; }
    `);
    expect(parseValue(outcome)).toEqual({
      name: "AppCallDenied",
      message: "denied by policy",
      details: { policy: "deny" },
      isError: true,
      proto: true,
    });
    const uncaught = await run(`await apps.notes.read_note({ id: "n1" });`);
    expect(uncaught).toMatchObject({ status: "failed", reason: "Error", message: "AppCallDenied: denied by policy" });
  });

  it("reports uncaught errors as name: message without a stack", async () => {
    expect(await run(`throw new RangeError("too far")`)).toMatchObject({
      status: "failed",
      reason: "Error",
      message: "RangeError: too far",
    });
    expect(await run(`throw "plain"`)).toMatchObject({ reason: "Error", message: "Uncaught 'plain'" });
    expect(await run("return 1;\nlet x = ;")).toMatchObject({
      reason: "Error",
      message: expect.stringMatching(/^SyntaxError: .*\(line 2, column \d+\)$/),
    });
  });

  it("gives vault references, never secrets, and keeps vault read-only", async () => {
    const outcome = await run(`
      vault.github.token = "x";
      vault.extra = 1;
      return [vault.github.token, vault.github.other, vault.nothing, Object.isFrozen(vault)];
    `);
    expect(parseValue(outcome)).toEqual(["⟦vault:github/token⟧", null, null, true]);
    expect(parseValue(await run(`"use strict"; try { vault.github.token = "x" } catch (e) { return e.name }`))).toBe(
      "TypeError",
    );
  });

  it("captures console levels with Node-like formatting, and text/json output in order", async () => {
    const outcome = await run(`
      console.log("plain", 1, true, null, undefined, [1, "a"], { a: { b: { c: { d: 1 } } } });
      console.info("%s has %d items", "list", 3);
      console.warn(new TypeError("careful"));
      console.error(new Map([["k", 1]]), new Set([1]), 10n, Symbol("s"), () => 1);
      text("first"); json({ b: 1, a: [1, 2] }); text({ x: 1 });
      return null;
    `);
    expect(outcome.logs).toEqual([
      { level: "log", text: "plain 1 true null undefined [ 1, 'a' ] { a: { b: { c: [Object] } } }" },
      { level: "info", text: "list has 3 items" },
      { level: "warn", text: "TypeError: careful" },
      { level: "error", text: "Map(1) { 'k' => 1 } Set(1) { 1 } 10n Symbol(s) [Function (anonymous)]" },
    ]);
    expect(outcome.output).toEqual([
      { type: "text", text: "first" },
      { type: "json", value: { b: 1, a: [1, 2] } },
      { type: "text", text: "{ x: 1 }" },
    ]);
  });

  it("fixes time to the run's time in UTC and seeds Math.random", async () => {
    const code = `return [Date.now(), new Date().toISOString(), new Date().getHours(), new Date(2026, 0, 2).toISOString(),
      new Date().getTimezoneOffset(), String(new Date(0)), Math.random(), Math.random()];`;
    const a = parseValue(await run(code)) as unknown[];
    const b = parseValue(await run(code)) as unknown[];
    expect(a).toEqual(b);
    expect(a.slice(0, 6)).toEqual([
      TIME,
      "2026-10-23T09:30:00.000Z",
      9,
      "2026-01-02T00:00:00.000Z",
      0,
      "Thu Jan 01 1970 00:00:00 GMT+0000",
    ]);
    const other = parseValue(await run(code, { seed: 8 })) as unknown[];
    expect(other[6]).not.toEqual(a[6]);
  });

  it("has no fetch, timers, require, import, WebAssembly, SharedArrayBuffer or Atomics", async () => {
    const outcome = await run(`
      const names = ["fetch", "setTimeout", "setInterval", "require", "process", "WebAssembly", "SharedArrayBuffer",
        "Atomics", "WeakRef", "FinalizationRegistry", "window", "self", "postMessage", "XMLHttpRequest", "std", "os"];
      const present = names.filter((n) => typeof globalThis[n] !== "undefined");
      let imported;
      try { await import("fs"); imported = "loaded"; } catch (e) { imported = e.name; }
      return { present, imported };
    `);
    expect(parseValue(outcome)).toEqual({ present: [], imported: expect.any(String) });
    expect((parseValue(outcome) as { imported: string }).imported).not.toBe("loaded");
  });

  it("serializes arguments with the engine's own JSON even when the program replaces it", async () => {
    const host = fakeHost();
    const outcome = await run(
      `
      JSON.stringify = () => '{"day":"evil"}';
      JSON.parse = () => "hijacked";
      const r = await apps.work_calendar.list_events({ z: 1, day: "2026-10-23", a: { y: 2, b: 1 } });
      return r.structuredContent.events.length;
    `,
      {},
      host,
    );
    expect(parseValue(outcome)).toBe(2);
    expect(host.calls[0]?.argsJson).toBe('{"a":{"b":1,"y":2},"day":"2026-10-23","z":1}');
  });

  it("requires JSON-compatible return values", async () => {
    expect(await run(`return 1n`)).toMatchObject({ reason: "Error", message: expect.stringContaining("TypeError") });
    expect(await run(`const a = {}; a.a = a; return a`)).toMatchObject({ reason: "Error" });
    expect(await run(`return undefined`)).toMatchObject({ status: "completed", valueJson: "null" });
    expect(await run(`return`)).toMatchObject({ status: "completed", valueJson: "null" });
    // A binding returned uncalled is named, not turned into null.
    expect(await run(`return apps.work_calendar.list_events`)).toMatchObject({
      reason: "Error",
      message: expect.stringMatching(
        /TypeError: the program returned a function, which is not JSON-compatible \(a function that was never called\?\)/,
      ),
    });
    expect(await run(`return Symbol("x")`)).toMatchObject({
      reason: "Error",
      message: expect.stringContaining("the program returned a symbol"),
    });
    // Inside data, JSON's own rule holds: a function-valued key is left out.
    expect(await run(`return { a: 1, f() {} }`)).toMatchObject({ status: "completed", valueJson: '{"a":1}' });
  });
});

describe("host answers", () => {
  it("pauses at a call that needs a decision, after other in-flight calls settle", async () => {
    let releaseSlow: (() => void) | undefined;
    const settled: number[] = [];
    const host = fakeHost(async (req): Promise<HostCallAnswer> => {
      if (req.index === 1) return { type: "pause" };
      if (req.index === 0) await new Promise<void>((resolve) => (releaseSlow = resolve));
      settled.push(req.index);
      return calendarOutcome(req);
    });
    const pending = run(
      `await Promise.all([apps.work_calendar.list_events({ day: "2026-10-23" }), apps.work_calendar.create_event({ t: 1 })]);
       await apps.work_calendar.list_events({ day: "x" }); return "never";`,
      {},
      host,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    releaseSlow?.();
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: "waiting", index: 1 });
    expect(settled).toEqual([0]);
    expect(host.calls.map((c) => c.index)).toEqual([0, 1]);
  });

  it("keeps running after a pause: allowed calls go out, later ask calls join, waiting only when nothing else can run", async () => {
    const host = fakeHost((req): HostCallAnswer => {
      if (req.binding === "work_calendar.create_event") return { type: "pause" };
      return calendarOutcome(req);
    });
    const pending = run(
      `const write = apps.work_calendar.create_event({ t: 1 });
       const day = await apps.work_calendar.list_events({ day: "2026-10-23" });
       const more = [1, 2, 3].map((t) => apps.work_calendar.create_event({ t: t + 1, n: day.structuredContent.events.length }));
       await apps.work_calendar.list_events({ day: "2026-10-24" });
       await Promise.all([write, ...more]);
       return "never";`,
      {},
      host,
    );
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: "waiting", index: 0 });
    expect(host.calls.map((c) => [c.index, c.binding])).toEqual([
      [0, "work_calendar.create_event"],
      [1, "work_calendar.list_events"],
      [2, "work_calendar.create_event"],
      [3, "work_calendar.create_event"],
      [4, "work_calendar.create_event"],
      [5, "work_calendar.list_events"],
    ]);
    expect(outcome.completionOrder).toEqual([1, 5]);
  });

  it("paused calls hold no maxPendingCalls slot: 20 parallel ask calls all reach the host in one attempt", async () => {
    const host = fakeHost((): HostCallAnswer => ({ type: "pause" }));
    const outcome = await run(
      `await Promise.all(Array.from({ length: 20 }, (_, i) => apps.work_calendar.create_event({ i })))`,
      { limits: { maxPendingCalls: 4 } },
      host,
    );
    expect(outcome).toMatchObject({ status: "waiting", index: 0 });
    expect(host.calls).toHaveLength(20);
  });

  it("a program that returns while calls still wait for a decision completes", async () => {
    const host = fakeHost((req): HostCallAnswer => (req.index === 0 ? { type: "pause" } : calendarOutcome(req)));
    const outcome = await run(
      `apps.work_calendar.create_event({ t: 1 }).catch(() => {});
       const d = await apps.work_calendar.list_events({ day: "2026-10-23" });
       return d.structuredContent.events.length;`,
      {},
      host,
    );
    expect(outcome).toMatchObject({ status: "completed", valueJson: "2" });
    expect(host.calls).toHaveLength(2);
  });

  it("fails with the reason the host gives when it stops the run", async () => {
    const host = fakeHost(() => ({ type: "stop", reason: "ReplayMismatch", message: "call 0 differs" }));
    expect(await run(CALENDAR_PROGRAM, {}, host)).toMatchObject({
      status: "failed",
      reason: "ReplayMismatch",
      message: "call 0 differs",
    });
    const rejecting = fakeHost(() => Promise.reject(new Error("db down /secret/path")));
    const outcome = await run(CALENDAR_PROGRAM, {}, rejecting);
    expect(outcome).toMatchObject({ status: "failed", reason: "Unavailable" });
    expect(JSON.stringify(outcome)).not.toContain("secret");
  });

  it("keeps at most maxPendingCalls in flight and sends the rest in issue order", async () => {
    let inFlight = 0;
    let peak = 0;
    const host = fakeHost(async (req) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      return { type: "ok", resultJson: String(req.index) };
    });
    const outcome = await run(
      `const r = await Promise.all(Array.from({ length: 20 }, (_, i) => apps.call("work_calendar.list_events", { i })));
       return r;`,
      { limits: { maxPendingCalls: 3 } },
      host,
    );
    expect(parseValue(outcome)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(peak).toBe(3);
    expect(host.calls.map((c) => c.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(host.calls.map((c) => JSON.parse(c.argsJson).i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("cancels a run waiting on a call that never settles", async () => {
    const controller = new AbortController();
    const host = { ...fakeHost(() => new Promise<HostCallAnswer>(() => undefined)), signal: controller.signal };
    const pending = run(CALENDAR_PROGRAM, {}, host);
    setTimeout(() => controller.abort(), 20);
    expect(await pending).toMatchObject({ status: "failed", reason: "Cancelled" });
    await expectHealthy();
  });
});

describe("limits", () => {
  it("times out on guest CPU, but not while waiting for calls", async () => {
    const outcome = await run(`while (true) {}`, { limits: { timeoutMs: 150 } });
    expect(outcome).toMatchObject({ status: "failed", reason: "Timeout" });
    await expectHealthy();
    const slowHost = fakeHost(async (req) => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return calendarOutcome(req);
    });
    const waited = await run(
      `for (let i = 0; i < 3; i++) await apps.work_calendar.list_events({ day: "2026-10-23" }); return "done";`,
      { limits: { timeoutMs: 100 } },
      slowHost,
    );
    expect(parseValue(waited)).toBe("done");
  });

  it("stops programs that exceed memory with reason Memory and stays usable", async () => {
    for (const code of [
      `const keep = []; while (true) keep.push(new Float64Array(1 << 18));`,
      `let s = "x".repeat(1 << 20); const keep = []; while (true) { keep.push(s + keep.length); s = s + s.slice(0, 1000); }`,
      `return new Uint8Array(1024 * 1024 * 1024).length;`,
      `const keep = []; while (true) keep.push({ a: keep.length, b: [keep.length] });`,
    ]) {
      const outcome = await run(code, { limits: { memoryMb: 16, timeoutMs: 10_000 } });
      expect(outcome, code).toMatchObject({ status: "failed", reason: "Memory" });
      await expectHealthy();
    }
  });

  it("fails OutputTooLarge for a big return value and cuts logs with a marker", async () => {
    const big = await run(`return "x".repeat(2000)`, { limits: { outputBytes: 1024 } });
    expect(big).toMatchObject({ status: "failed", reason: "OutputTooLarge" });
    const utf8 = await run(`return "é".repeat(600)`, { limits: { outputBytes: 1024 } });
    expect(utf8).toMatchObject({ status: "failed", reason: "OutputTooLarge" });
    const logged = await run(`for (let i = 0; i < 500; i++) console.log("line " + i); return "ok"`, {
      limits: { outputBytes: 1024 },
    });
    expect(parseValue(logged)).toBe("ok");
    const text = logged.logs
      .slice(0, -1)
      .map((l) => l.text)
      .join("");
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(1024);
    expect(logged.logs.at(-1)).toEqual({ level: "warn", text: "[log output truncated: more than 1024 bytes]" });
    const output = await run(`for (let i = 0; i < 100; i++) text("0123456789".repeat(5)); return 1`, {
      limits: { outputBytes: 1024 },
    });
    expect(output).toMatchObject({ status: "failed", reason: "OutputTooLarge" });
    await expectHealthy();
  });

  it("delivers large call results exactly, whatever their characters (the encodeInto copy and its fallback)", async () => {
    const texts = {
      ascii: "row,".repeat(5000),
      mixed: "é中😀\u0000x".repeat(3000),
      lone: `${"a\uD800b\uDC00c".repeat(1000)}\uD83D`,
    };
    for (const [name, text] of Object.entries(texts)) {
      // Raw characters in the JSON text (JSON.stringify would escape the lone surrogates and the NUL).
      const resultJson = `{"text":"${text.replace(/\u0000/g, "\\u0000")}"}`;
      const host = fakeHost(() => ({ type: "ok", resultJson }));
      const outcome = await run(
        `const r = await apps.work_calendar.list_events({}); const codes = [];
         for (let i = 0; i < r.text.length; i += 997) codes.push(r.text.charCodeAt(i));
         return { length: r.text.length, codes, last: r.text.charCodeAt(r.text.length - 1) };`,
        { limits: { outputBytes: 1 << 20 } },
        host,
      );
      const codes = [];
      for (let i = 0; i < text.length; i += 997) codes.push(text.charCodeAt(i));
      expect(parseValue(outcome), name).toEqual({ length: text.length, codes, last: text.charCodeAt(text.length - 1) });
    }
  });

  it("counts the return value's UTF-8 bytes exactly at the output limit", async () => {
    // 400 × "é" is 800 bytes of UTF-8, plus 2 quotes: 802; the quick 3-bytes-per-unit bound would say 1206.
    expect(parseValue(await run(`return "é".repeat(400)`, { limits: { outputBytes: 802 } }))).toBe("é".repeat(400));
    expect(await run(`return "é".repeat(400)`, { limits: { outputBytes: 801 } })).toMatchObject({
      status: "failed",
      reason: "OutputTooLarge",
    });
  });

  it("turns deep recursion into a catchable InternalError", async () => {
    const outcome = await run(`
      function down(n) { return down(n + 1) + 1; }
      try { down(0); } catch (e) { return e.name + ": " + e.message; }
    `);
    expect(parseValue(outcome)).toBe("InternalError: stack overflow");
    await expectHealthy();
  });

  it("refuses invalid input as Unavailable", async () => {
    const engine = await getEngine();
    const bad = {
      ...input("return 1"),
      limits: { timeoutMs: -1, memoryMb: 32, outputBytes: 1024, maxPendingCalls: 1 },
    };
    expect(await engine.run(bad, fakeHost())).toMatchObject({ status: "failed", reason: "Unavailable" });
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every depth and normalizes numbers", () => {
    expect(canonicalJson('{"b":1,"a":{"d":[{"z":1,"y":2}],"c":1.0},"__proto__":{"x":1}}')).toBe(
      '{"__proto__":{"x":1},"a":{"c":1,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe("log lines", () => {
  it("reach the host before the program awaits a call, in order, with their levels", async () => {
    const engine = await getEngine();
    const seen: string[] = [];
    const outcome = await engine.run(
      input(`console.log("a"); console.info("b", 1); console.warn("c"); console.error("d"); console.debug("e");
        await apps.work_calendar.list_events({ day: "2026-10-23" });
        console.log("after");
        return 1;`),
      {
        ...fakeHost((req) => {
          seen.push(`call ${req.binding}`);
          return calendarOutcome(req);
        }),
        onLog: (line) => seen.push(`${line.level} ${line.text}`),
      },
    );
    expect(parseValue(outcome)).toBe(1);
    expect(seen).toEqual([
      "log a",
      "info b 1",
      "warn c",
      "error d",
      "log e",
      "call work_calendar.list_events",
      "log after",
    ]);
  });

  it("that fill the log's bytes exactly are followed by the truncation marker when one more line comes", async () => {
    const engine = await getEngine();
    const outcome = await engine.run(
      input(`for (let i = 0; i < 9; i++) console.log("x".repeat(128)); return 1;`, { limits: { outputBytes: 1024 } }),
      fakeHost(),
    );
    expect(parseValue(outcome)).toBe(1);
    expect(outcome.logs).toEqual([
      ...Array.from({ length: 8 }, () => ({ level: "log", text: "x".repeat(128) })),
      { level: "warn", text: "[log output truncated: more than 1024 bytes]" },
    ]);
  });

  it("logged in a slice that is stopped (time, memory, cancel) are kept, once each", async () => {
    const engine = await getEngine();
    const timedOut = await engine.run(
      input(`for (let i = 0; i < 10; i++) console.log("t" + i); while (true) {}`, { limits: { timeoutMs: 100 } }),
      fakeHost(),
    );
    expect(timedOut).toMatchObject({ status: "failed", reason: "Timeout" });
    expect(timedOut.logs.map((l) => l.text)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));

    // 100 lines: the first 64 left with the box's own flush, the rest were still in it when the slice stopped.
    // (In process the guest holds this thread, so the flag is raised by the interrupt handler's own polls.)
    let polls = 0;
    const stopped = await engine.run(input(`for (let i = 0; i < 100; i++) console.log("c" + i); while (true) {}`), {
      ...fakeHost(),
      cancelled: () => ++polls > 20,
    });
    expect(stopped).toMatchObject({ status: "failed", reason: "Cancelled" });
    expect(stopped.logs.map((l) => l.text)).toEqual(Array.from({ length: 100 }, (_, i) => `c${i}`));

    const memory = await engine.run(
      input(`console.log("before"); const a = []; for (;;) a.push(new Array(1e5).fill(1));`, {
        limits: { memoryMb: 16 },
      }),
      fakeHost(),
    );
    expect(memory).toMatchObject({ status: "failed", reason: "Memory" });
    expect(memory.logs.map((l) => l.text)).toEqual(["before"]);
  });
});
