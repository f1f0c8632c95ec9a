import { loadEngine } from "../dist/worker/engine.mjs";
const e = await loadEngine({preloadMemoryMb: 32});
const cases = process.argv.slice(2);
for (const code of cases) {
  const o = await e.run({code, time: 0, seed: 1, bindings: ["x.y", "x.z"], vaultNames: [], limits: {timeoutMs: 300, memoryMb: 32, outputBytes: 2000, maxPendingCalls: 4}}, {call: async (r) => { console.log("host called", r.argsJson.length); return ({type: "ok", resultJson: "{\"a\":1}"}) }});
  console.log(code.slice(0, 50), "=>", o.status, o.reason ?? "", (o.message ?? o.valueJson).slice(0, 150));
}
