import { loadEngine } from "../dist/worker/engine.mjs";
const e = await loadEngine({preloadMemoryMb: 32});
const cases = [
 `return /^(a+)+$/.test("a".repeat(40) + "b")`,
 `return (new Array(1e9) + "").length`,
 `return new ArrayBuffer(2**31).byteLength`,
 `Promise.prototype.then = function () { throw new Error("no") }; const r = await apps.x.y({}); return r`,
 `const f = () => Promise.resolve().then(f); f(); await new Promise(()=>{})`,
 `Error.prepareStackTrace = (e, s) => s; return new Error("x").stack`,
 `try { await apps.x.z({}) } catch (e) { return e.stack }`,
 `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; await apps.x.y(a)`,
 `const p = new Proxy({}, { get: (t, k) => p[k] }); return p.x`,
 `return [1,2,3].sort(() => { for(;;){} })`,
 `const o = {}; for (let i = 0; i < 1e6; i++) o["k" + i] = i; console.log(o); return 1`,
 `return Array(1e8).fill(0).length`,
 `const m = new Map(); for (let i = 0; ; i++) m.set(i, {i})`,
 `new apps.x.y()`,
 `throw Symbol("s")`,
 `const e = new Error("m"); Object.defineProperty(e, "message", { get() { throw 1 } }); throw e`,
 `const e = new Error("m"); Object.defineProperty(e, "name", { get() { return "N".repeat(1e6) } }); throw e`,
];
for (const code of cases) {
  const t = performance.now();
  const o = await e.run({code, time: 0, seed: 1, bindings: ["x.y", "x.z"], vaultNames: [], limits: {timeoutMs: 300, memoryMb: 32, outputBytes: 2000, maxPendingCalls: 4}}, {call: async (r) => r.binding === "x.z" ? ({type: "error", name: "AppCallFailed", message: "bad", details: {}}) : ({type: "ok", resultJson: "{\"a\":1}"})});
  console.log(Math.round(performance.now() - t), code.slice(0, 50), "=>", o.status, o.reason ?? "", (o.message ?? o.valueJson).slice(0, 150), o.logs.length ? o.logs[0].text.slice(0, 100) : "");
}
