import { loadEngine } from "../dist/worker/engine.mjs";
const e = await loadEngine({preloadMemoryMb: 16});
const o = await e.run({code: `const keep = []; while (true) keep.push({ a: keep.length, b: [keep.length] });`, time: 0, seed: 1, bindings: [], vaultNames: [], limits: {timeoutMs: 10000, memoryMb: 16, outputBytes: 1000, maxPendingCalls: 1}}, {call: async () => ({type: "pause"})});
console.log(o);
