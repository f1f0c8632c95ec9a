import { loadEngine } from "../dist/worker/engine.mjs";
const e = await loadEngine({preloadMemoryMb: 32});
for (const code of ["return (7n ** 2000000n).toString().length;", "return (7n ** 400000n).toString().length;", "let x = 7n ** 1000000n; return String(x * x).length"]) {
const t = performance.now();
const o = await e.run({code, time: 0, seed: 1, bindings: [], vaultNames: [], limits: {timeoutMs: 200, memoryMb: 32, outputBytes: 1000, maxPendingCalls: 1}}, {call: async () => ({type: "pause"})});
console.log(performance.now() - t, o);
}
