/**
 * A/B of preparing a context (runtime + context + the prelude core + its run-independent half, as
 * run-session.ts's prepareContext) with the stock build from source (before), our build from source, and our
 * build from bytecode (after); plus guest compute (a 1e6 loop) and host-call crossings on both builds, to
 * show our build (another emcc and clang) is not slower. Interleaved in one process, CPU time per rep.
 *
 *   chrt -f 10 npm run bench:prelude -- [reps=1000]   (bundles what it needs itself)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist/bench/prelude-core.mjs");
await build({
  stdin: {
    contents: `export { moduleFor, setCompiledWasm } from "./worker/quickjs-module";
      export { evalPreludeCore, evalPreludeSource, usesPreludeBytecode } from "./worker/prelude-bytecode";
      export { MAX_STACK_BYTES } from "./worker/run-session";`,
    resolveDir: root,
    loader: "ts",
  },
  bundle: true,
  platform: "node",
  format: "esm",
  outfile: out,
  external: ["quickjs-emscripten-core", "@jitl/quickjs-wasmfile-release-sync"],
  logLevel: "warning",
});
const lib = await import(out);
const reps = Number(process.argv[2] ?? 1000);

lib.setCompiledWasm(
  new WebAssembly.Module(readFileSync(path.join(root, "worker/quickjs/emscripten-module.wasm"))),
  "openbot",
);
const ours = await lib.moduleFor(64);
lib.setCompiledWasm(undefined);
const stock = await lib.moduleFor(32);
if (!lib.usesPreludeBytecode(ours) || lib.usesPreludeBytecode(stock)) throw new Error("builds mixed up");

function cpuMs(fn) {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function prepare(module, fromBytecode) {
  const runtime = module.quickjs.newRuntime();
  runtime.setMaxStackSize(lib.MAX_STACK_BYTES);
  const ctx = runtime.newContext();
  const core = fromBytecode ? lib.evalPreludeCore(module, ctx) : lib.evalPreludeSource(ctx);
  if (core.error) throw new Error("core failed");
  const configure = ctx.callFunction(core.value, ctx.undefined);
  core.value.dispose();
  if (configure.error) throw new Error("configure failed");
  configure.value.dispose();
  ctx.dispose();
  runtime.dispose();
}

function compute(module) {
  const ctx = module.quickjs.newContext();
  const r = ctx.evalCode("let s = 0; for (let i = 0; i < 1e6; i++) s += i; s");
  (r.error ?? r.value).dispose();
  ctx.dispose();
}

function calls(module) {
  const ctx = module.quickjs.newContext();
  const fn = ctx.newFunction("h", (x) => ctx.newNumber(ctx.getNumber(x) + 1));
  ctx.setProp(ctx.global, "h", fn);
  fn.dispose();
  const r = ctx.evalCode("let s = 0; for (let i = 0; i < 2000; i++) s = h(s); s");
  (r.error ?? r.value).dispose();
  ctx.dispose();
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
function ab(name, cases, n) {
  const times = cases.map(() => []);
  for (let i = 0; i < 20; i++) for (const [, fn] of cases) fn(); // warm-up (tier-up)
  for (let i = 0; i < n; i++) {
    const order = i % 2 ? cases.map((_, k) => k).reverse() : cases.map((_, k) => k);
    for (const k of order) times[k].push(cpuMs(cases[k][1]));
  }
  const base = median(times[0]);
  console.log(
    `${name} (${n} reps, median CPU ms): ` +
      cases
        .map(([label], k) => `${label} ${median(times[k]).toFixed(3)} (x${(median(times[k]) / base).toFixed(2)})`)
        .join(", "),
  );
}

ab(
  "prepareContext",
  [
    ["stock/source", () => prepare(stock, false)],
    ["ours/source", () => prepare(ours, false)],
    ["ours/bytecode", () => prepare(ours, true)],
  ],
  reps,
);
ab(
  "compute 1e6 loop",
  [
    ["stock", () => compute(stock)],
    ["ours", () => compute(ours)],
  ],
  Math.max(20, reps / 50),
);
ab(
  "2000 host calls",
  [
    ["stock", () => calls(stock)],
    ["ours", () => calls(ours)],
  ],
  Math.max(50, reps / 10),
);
