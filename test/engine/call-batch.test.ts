/**
 * App calls leave the guest in batches: the prelude queues every call a slice issues and the host takes them
 * all in one crossing after the slice (worker/prelude.ts `bridge`, worker/run-session.ts `takeCalls`), then
 * settles each call's promise through the same bridge. These tests count the crossings and check that the
 * queue keeps order, numbering and results, and that a program tampering with the intrinsics the queue uses
 * (array indexes and join, Map methods, Promise) changes nothing that crosses.
 */
import { describe, expect, it } from "vitest";
import { callTakeCounts } from "@/worker/engine";
import { fakeHost, getEngine, input, parseValue } from "./helpers";

const echo = (req: { argsJson: string }) => ({ type: "ok" as const, resultJson: req.argsJson });
const BINDINGS = { bindings: ["bench.echo", "bench.other"] };

async function counted(code: string) {
  const engine = await getEngine();
  const host = fakeHost(echo);
  const before = callTakeCounts();
  const outcome = await engine.run(input(code, BINDINGS), host);
  const after = callTakeCounts();
  return {
    outcome,
    host,
    takes: after.takes - before.takes,
    calls: after.calls - before.calls,
    jobs: after.jobs - before.jobs,
  };
}

describe("calls cross in one piece per slice", () => {
  it("ten parallel calls leave the guest in one take, numbered in issue order", async () => {
    const run = await counted(
      "const r = await Promise.all(Array.from({ length: 10 }, (_, i) => apps.bench.echo({ i }))); return r.map((x) => x.i);",
    );
    expect(parseValue(run.outcome)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(run.takes).toBe(1);
    expect(run.calls).toBe(10);
    expect(run.host.calls.map((c) => [c.index, c.argsJson])).toEqual(
      Array.from({ length: 10 }, (_, i) => [i, `{"i":${i}}`]),
    );
  });

  it("awaited calls take one crossing each, and calls of several bindings in one slice share one", async () => {
    const run = await counted(`
      let n = 0;
      for (let i = 0; i < 3; i++) n += (await apps.bench.echo({ i })).i;
      const [a, b] = await Promise.all([apps.bench.other({ x: 1 }), apps.call("bench.echo", { y: 2 })]);
      return [n, a.x, b.y];`);
    expect(parseValue(run.outcome)).toEqual([3, 1, 2]);
    expect(run.takes).toBe(4);
    expect(run.calls).toBe(5);
    expect(run.host.calls.map((c) => c.binding)).toEqual([
      "bench.echo",
      "bench.echo",
      "bench.echo",
      "bench.other",
      "bench.echo",
    ]);
  });

  it("an awaited call costs the guest one promise job: its promise settles with the parsed value", async () => {
    // Before, each call ran an async function around the queued promise: two jobs per awaited call (41 here).
    const run = await counted(
      "let n = 0; for (let i = 0; i < 20; i++) n += (await apps.bench.echo({ i })).i; return n;",
    );
    expect(parseValue(run.outcome)).toBe(190);
    const before = callTakeCounts();
    await (await getEngine()).run(input("return 1", BINDINGS), fakeHost(echo));
    const startJobs = callTakeCounts().jobs - before.jobs;
    expect(run.jobs - startJobs).toBe(20);
  });

  it("bad arguments and a result the guest cannot parse reject the call's promise, never throw", async () => {
    const engine = await getEngine();
    const host = fakeHost((req) =>
      req.binding === "bench.other"
        ? { type: "ok", resultJson: "{not json" }
        : { type: "ok", resultJson: req.argsJson },
    );
    const outcome = await engine.run(
      input(
        `const seen = [];
        const bad = { toJSON() { throw new Error("boom"); } };
        let p;
        try { p = apps.bench.echo(bad); } catch (e) { seen.push("threw"); }
        seen.push(p instanceof Promise);
        try { await p; } catch (e) { seen.push(e.message); }
        try { await apps.bench.echo({ f() {}, big: 10n }); } catch (e) { seen.push(e.name); }
        try { await apps.bench.other({}); } catch (e) { seen.push(e.name); }
        seen.push((await apps.bench.echo({ ok: 1 })).ok);
        return seen;`,
        BINDINGS,
      ),
      host,
    );
    expect(parseValue(outcome)).toEqual([true, "boom", "TypeError", "SyntaxError", 1]);
    expect(host.calls.map((c) => c.binding)).toEqual(["bench.other", "bench.echo"]);
  });

  it("a rejected call and a refused call in the same slice settle the right promises", async () => {
    const engine = await getEngine();
    const host = fakeHost((req) =>
      req.binding === "bench.other"
        ? { type: "error", name: "AppCallDenied", message: "no", details: {} }
        : { type: "ok", resultJson: req.argsJson },
    );
    const outcome = await engine.run(
      input(
        `const deep = []; let d = deep; for (let i = 0; i < 600; i++) { const n = []; d.push(n); d = n; }
        const r = await Promise.allSettled([apps.bench.echo({ a: 1 }), apps.bench.other({}), apps.bench.echo(deep), apps.bench.echo({ b: 2 })]);
        return r.map((x) => x.status === "fulfilled" ? x.value : x.reason.name);`,
        BINDINGS,
      ),
      host,
    );
    expect(parseValue(outcome)).toEqual([{ a: 1 }, "AppCallDenied", "AppCallFailed", { b: 2 }]);
    // The refused call (too deep) takes no index: the host saw three calls, numbered 0..2.
    expect(host.calls.map((c) => [c.index, c.binding])).toEqual([
      [0, "bench.echo"],
      [1, "bench.other"],
      [2, "bench.echo"],
    ]);
    expect(outcome.completionOrder).toEqual([0, 1, 2]);
  });

  it("a program that tampers with arrays, Map and Promise does not change what crosses", async () => {
    const run = await counted(`
      Array.prototype.join = () => "5:bench9:{}";
      Array.prototype.push = () => { throw new Error("push"); };
      Map.prototype.get = () => undefined;
      Map.prototype.set = () => { throw new Error("set"); };
      Map.prototype.delete = () => false;
      String.prototype.slice = () => "";
      const r = await Promise.all([apps.bench.echo({ a: "x:1" }), apps.bench.other({ b: "3:abc" })]);
      return [r[0].a, r[1].b];`);
    expect(parseValue(run.outcome)).toEqual(["x:1", "3:abc"]);
    expect(run.host.calls.map((c) => [c.binding, c.argsJson])).toEqual([
      ["bench.echo", '{"a":"x:1"}'],
      ["bench.other", '{"b":"3:abc"}'],
    ]);
  });

  it("calls whose frames are long leave in one take once the host checked its heap, whole and in order", async () => {
    const run = await counted(`
      const big = (c) => c.repeat(3000);
      const r = await Promise.all([apps.bench.echo({ s: big("a") }), apps.bench.other({ s: big("é") }), apps.bench.echo({ s: "x" })]);
      const last = await apps.bench.echo({ n: 1 });
      return [r[0].s.length, r[1].s === big("é"), r[2].s, last.n];`);
    expect(parseValue(run.outcome)).toEqual([3000, true, "x", 1]);
    expect(run.takes).toBe(2);
    expect(run.host.calls.map((c) => [c.index, c.binding, c.argsJson.length])).toEqual([
      [0, "bench.echo", 3008],
      [1, "bench.other", 3008],
      [2, "bench.echo", 9],
      [3, "bench.echo", 7],
    ]);
  });

  it("setters a program puts on Object and Array prototypes do not see the queue or the pending calls", async () => {
    const run = await counted(`
      let hits = 0;
      for (const key of ["0", "1", "2", "length", "3"]) {
        for (const proto of key === "length" ? [Object.prototype] : [Object.prototype, Array.prototype]) {
          Object.defineProperty(proto, key, { set() { if (!new Error().stack.includes("stringify")) hits += 1; }, get() { return "5:bench9:{}"; }, configurable: true });
        }
      }
      // QuickJS's own JSON.stringify (of the program's arguments) stores through these setters: not counted.
      const p = apps.bench.echo({ a: 1 }), q = apps.bench.other({ b: 2 }), s = apps.bench.echo({ c: 3 });
      const a = (await p).a, b = (await q).b, c = (await s).c;
      return [a, b, c, hits];`);
    expect(parseValue(run.outcome)).toEqual([1, 2, 3, 0]);
    expect(run.host.calls.map((c) => [c.binding, c.argsJson])).toEqual([
      ["bench.echo", '{"a":1}'],
      ["bench.other", '{"b":2}'],
      ["bench.echo", '{"c":3}'],
    ]);
  });

  it("the guest cannot settle or forge calls through the bridge: it is not reachable from the program", async () => {
    const run = await counted(`
      const seen = [typeof bridge, typeof takeCalls, typeof settle, typeof queueCall, typeof hostCall];
      return seen;`);
    expect(parseValue(run.outcome)).toEqual(["undefined", "undefined", "undefined", "undefined", "undefined"]);
    expect(run.takes).toBe(0);
  });
});
