/**
 * OpenBot's QuickJS build (worker/quickjs, scripts/build-quickjs.sh) and the prelude core run from its bytecode
 * (worker/prelude-bytecode.ts): the committed files are the ones BUILD.txt describes and the .wasm the server
 * hands its worker threads; the core is compiled to bytecode once per module, not per context, and every
 * context still gets a working core; deep recursion stays a catchable guest error in the worker threads that
 * use the build; a build without the bytecode functions (the stock package) keeps the source path. This file
 * loads its in-process engine from our build (each test file runs in a process of its own).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Engine, loadEngine } from "@/worker/engine";
import { QUICKJS_WASM_PATH, spawnNodeWorker } from "@/worker/node-port";
import { evalPreludeCore, preludeBytecodeCompiles, usesPreludeBytecode } from "@/worker/prelude-bytecode";
import { moduleFor, type SandboxModule } from "@/worker/quickjs-module";
import { prepareContext } from "@/worker/run-session";
import { SandboxSupervisor } from "@/worker/supervisor";
import { buildWorkerBundle, fakeHost, input, LIMITS, parseValue } from "./helpers";

const BUILD_DIR = path.join(process.cwd(), "worker/quickjs");
const WASM = path.join(BUILD_DIR, "emscripten-module.wasm");
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine({
    wasmModule: new WebAssembly.Module(readFileSync(WASM)),
    build: "openbot",
    preloadMemoryMb: LIMITS.memoryMb,
  });
});

describe("the committed QuickJS build", () => {
  it("is what BUILD.txt records (emcc version, source commit, sha256 of loader and .wasm)", () => {
    const record = readFileSync(path.join(BUILD_DIR, "BUILD.txt"), "utf8");
    expect(record).toMatch(/^emcc: emcc .* 3\.1\.6/m);
    expect(record).toMatch(/^source: justjake\/quickjs-emscripten v0\.32\.0 \([0-9a-f]{40}\)/m);
    for (const file of ["emscripten-module.mjs", "emscripten-module.wasm"]) {
      expect(record).toContain(`${sha256(path.join(BUILD_DIR, file))}  ${file}`);
    }
  });

  it("is the .wasm the server hands its worker threads", () => {
    expect(QUICKJS_WASM_PATH).toBe(WASM);
  });
});

describe("the prelude core from bytecode", () => {
  it("is compiled once per module, however many contexts and runs it serves", async () => {
    const module = await moduleFor(LIMITS.memoryMb);
    expect(usesPreludeBytecode(module)).toBe(true);
    const compiles = preludeBytecodeCompiles();
    for (let i = 0; i < 5; i++) {
      const outcome = await engine.run(
        input(`return [${i}, typeof console.log, new Date(0).toISOString()]`),
        fakeHost(),
      );
      expect(parseValue(outcome)).toEqual([i, "function", "1970-01-01T00:00:00.000Z"]);
    }
    for (let i = 0; i < 3; i++) {
      const fresh = prepareContext(module);
      if (!fresh) throw new Error("no prepared context");
      expect(fresh.context.typeof(fresh.prelude)).toBe("function");
      fresh.prelude.dispose();
      fresh.context.dispose();
      fresh.runtime.dispose();
    }
    expect(preludeBytecodeCompiles()).toBe(compiles);
  });

  it("serves every run a full prelude: calls, logs, lazily loaded parts, replayable time", async () => {
    const host = fakeHost(() => ({ type: "ok", resultJson: '{"n":2}' }));
    const outcome = await engine.run(
      input(`const r = await apps.work_calendar.list_events({ day: "x" }); console.log("got", r);
        return [r.n, String(new Date(Date.now())).length > 0, typeof Math.random()];`),
      host,
    );
    expect(parseValue(outcome)).toEqual([2, true, "number"]);
    expect(host.calls).toHaveLength(1);
    expect(outcome.logs[0]).toMatchObject({ level: "log" });
  });

  it("copies host strings in as the stock build does: a lone surrogate keeps the character after it", async () => {
    // emcc 3.1.6's own stringToUTF8 would join the lone \uD83D with the closing quote (quickjs/variant.ts).
    for (const text of [`a\uD800b\uDC00c`, `${"x\uD83D".repeat(600)}\uD83D`, "é中😀"]) {
      const host = fakeHost(() => ({ type: "ok", resultJson: `{"text":"${text}"}` }));
      const outcome = await engine.run(
        input(`const r = await apps.work_calendar.list_events({});
          return Array.from({ length: r.text.length }, (_, i) => r.text.charCodeAt(i));`),
        host,
      );
      expect(parseValue(outcome)).toEqual(Array.from({ length: text.length }, (_, i) => text.charCodeAt(i)));
    }
  });

  it("falls back to the source with a build that lacks the bytecode functions (the stock package)", async () => {
    const stock = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
    const module = { quickjs: stock, broken: false } as unknown as SandboxModule;
    const runtime = stock.newRuntime();
    const ctx = runtime.newContext();
    try {
      const compiles = preludeBytecodeCompiles();
      const result = evalPreludeCore(module, ctx);
      if (!result.value) throw new Error("the core did not load");
      expect(ctx.typeof(result.value)).toBe("function");
      result.value.dispose();
      expect(usesPreludeBytecode(module)).toBe(false);
      expect(preludeBytecodeCompiles()).toBe(compiles);
    } finally {
      ctx.dispose();
      runtime.dispose();
    }
  });
});

describe("our build's limits in Node worker threads", () => {
  let supervisor: SandboxSupervisor;
  beforeAll(() => {
    buildWorkerBundle();
    supervisor = new SandboxSupervisor({ spawn: () => spawnNodeWorker() });
  });
  afterAll(() => supervisor.dispose());

  it.each([
    ["recursive getter", `const o = { get x() { return this.x; } }; try { o.x; } catch (e) { return e.message; }`],
    ["recursive function", `const f = (n) => f(n + 1) + 1; try { f(0); } catch (e) { return e.message; }`],
    [
      "recursive Proxy trap",
      `const p = new Proxy({}, { get: (t, k) => p[k] }); try { p.x; } catch (e) { return e.message; }`,
    ],
    ["nested source", `try { eval("[".repeat(20000) + "]".repeat(20000)); } catch (e) { return e.message; }`],
    ["nested JSON", `try { JSON.parse("[".repeat(20000) + "]".repeat(20000)); } catch (e) { return e.message; }`],
  ])("%s is a catchable stack overflow", async (_name, code) => {
    for (let i = 0; i < 3; i++) {
      expect(parseValue(await supervisor.run(input(code), fakeHost()))).toBe("stack overflow");
    }
  });

  it.each([
    ["typed arrays", `const k = []; for (;;) k.push(new Float64Array(1 << 18));`, "Memory"],
    ["many small objects", `const k = []; for (;;) k.push({ a: k.length, b: [k.length] });`, "Memory"],
    ["one huge typed array", `return new Uint8Array(512 * 1024 * 1024).length;`, "Memory"],
    ["infinite loop", `for (;;) {}`, "Timeout"],
    ["ReDoS", `return /^(a+)+$/.test("a".repeat(40) + "b");`, "Timeout"],
    ["await loop", `for (;;) await null;`, "Timeout"],
  ])("%s fails %s and the next run still works", async (_name, code, reason) => {
    const limits = reason === "Memory" ? { memoryMb: 16, timeoutMs: 10_000 } : { timeoutMs: 300 };
    const outcome = await supervisor.run(input(code, { limits }), fakeHost());
    expect(outcome).toMatchObject({ status: "failed", reason });
    expect(parseValue(await supervisor.run(input("return [1, 2].map((x) => x * 3)"), fakeHost()))).toEqual([3, 6]);
  });
});
