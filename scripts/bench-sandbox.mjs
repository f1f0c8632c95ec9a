/**
 * `npm run bench:sandbox`: medians for the sandbox engine (dist/worker/engine.mjs, built by
 * build-worker.mjs) in this process, printed with the machine and the targets from issue 3. Measures
 * module load, run start, one bridge round trip, 1000 calls in Promise.all, the replay of a 100-call run,
 * and the memory of an idle runtime. Informational only: nothing here fails on a slow machine.
 */
import os from "node:os";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import { loadEngine } from "../dist/worker/engine.mjs";

const LIMITS = { timeoutMs: 10_000, memoryMb: 64, outputBytes: 1 << 20, maxPendingCalls: 128 };
const input = (code, extra = {}) => ({ code, time: 0, seed: 1, limits: LIMITS, bindings: ["bench.echo"], vaultNames: [], ...extra });
const instant = { call: async (req) => ({ type: "ok", resultJson: req.argsJson }) };

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
/** Median time of `fn` over `n` runs; with `idle`, the engine gets a few ms of idle time before each run. */
async function sample(n, fn, idle = false) {
  const times = [];
  for (let i = 0; i < n; i++) {
    if (idle) await new Promise((resolve) => setTimeout(resolve, 2));
    const started = performance.now();
    await fn(i);
    times.push(performance.now() - started);
  }
  return median(times);
}
async function expectCompleted(promise) {
  const outcome = await promise;
  if (outcome.status !== "completed") throw new Error(`bench run failed: ${JSON.stringify(outcome).slice(0, 300)}`);
  return outcome;
}

const rows = [];
const row = (name, value, unit, target) => rows.push([name, `${value.toFixed(unit === "ms" ? 2 : 1)} ${unit}`, target]);

const moduleLoad = await sample(5, async (i) => {
  const pages = (24 + i) * 16;
  const wasmMemory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory }));
});
row("module load (fresh WebAssembly instance)", moduleLoad, "ms", "—");

const engine = await loadEngine({ preloadMemoryMb: LIMITS.memoryMb });
for (let i = 0; i < 20; i++) await expectCompleted(engine.run(input("return 1"), instant));
const trivial = () => expectCompleted(engine.run(input("return 1"), instant));
const start = await sample(300, trivial, true);
row("run start (runtime + context + prelude + trivial program + dispose)", start, "ms", "≤ 1 ms");
const backToBack = await sample(300, trivial);
row("  same, runs back to back (no idle time to prepare a context)", backToBack, "ms", "—");
const logging = await sample(100, () => expectCompleted(engine.run(input("console.log({ a: [1] }, new Date().toString()); return 1"), instant)), true);
row("  same, program logs an object and a Date string (lazy parts)", logging, "ms", "—");

const roundTrips = 2000;
const sequential = await sample(5, () =>
  expectCompleted(engine.run(input(`for (let i = 0; i < ${roundTrips}; i++) await apps.bench.echo({ i }); return 1;`), instant)),
);
row("one bridge round trip (sequential awaits, in-process)", ((sequential - backToBack) / roundTrips) * 1000, "µs", "≤ 50 µs");

const parallel = await sample(5, () =>
  expectCompleted(
    engine.run(input(`const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => apps.bench.echo({ i }))); return r.length;`), instant),
  ),
);
row("1000 calls in Promise.all (instant host, maxPendingCalls 128)", parallel, "ms", "—");

const hundred = `const r = await Promise.all(Array.from({ length: 50 }, (_, i) => apps.bench.echo({ i })));
  for (let i = 0; i < 50; i++) r.push(await apps.bench.echo({ j: i })); return r.length;`;
const recorded = [];
const live = await expectCompleted(
  engine.run(input(hundred), {
    call: async (req) => {
      const outcome = { type: "ok", resultJson: req.argsJson };
      recorded.push({ ...req, outcome });
      return outcome;
    },
  }),
);
const replay = { calls: recorded, completionOrder: live.completionOrder };
const never = { call: async () => ({ type: "stop", reason: "Unavailable", message: "replay must not call" }) };
const replayed = await sample(20, () => expectCompleted(engine.run(input(hundred, { replay }), never)));
row("replay of a 100-call run", replayed, "ms", "≤ 20 ms");

const idle = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
const runtime = idle.newRuntime();
const context = runtime.newContext();
const usageHandle = runtime.computeMemoryUsage();
const usage = context.dump(usageHandle);
usageHandle.dispose();
row("memory per idle runtime + context (QuickJS memory_used_size)", usage.memory_used_size / 1024, "KiB", "—");
context.dispose();
runtime.dispose();

const cpu = os.cpus()[0]?.model ?? "unknown cpu";
console.log(`machine: ${cpu}, ${os.cpus().length} cores, node ${process.version}, ${os.platform()} ${os.arch()}`);
const width = Math.max(...rows.map((r) => r[0].length));
console.log(`${"measure".padEnd(width)}  ${"median".padStart(12)}  target`);
for (const [name, value, target] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(12)}  ${target}`);
