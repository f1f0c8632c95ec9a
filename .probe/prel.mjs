import { build } from "esbuild";
await build({ entryPoints: ["worker/prelude.ts"], outfile: ".probe/prelude.mjs", format: "esm", bundle: true, logLevel: "warning" });
const { PRELUDE_SOURCE } = await import("./prelude.mjs");
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
const mod = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
const ctx = mod.newContext();
const p = ctx.evalCode(PRELUDE_SOURCE, "prelude.js", { type: "global", strict: true });
if (p.error) { console.log("eval", ctx.dump(p.error)); process.exit(); }
const f = ctx.newFunction("x", () => ctx.newNumber(1000));
const cfg = ctx.newString(JSON.stringify({ bindings: ["a.b", "call.x"], vaultNames: ["github/token"], time: 0, seed: 1, argsMax: 100, valueMax: 100, logMax: 100 }));
const r = ctx.callFunction(p.value, ctx.undefined, [f, f, f, cfg]);
console.log(r.error ? ctx.dump(r.error) : "ok");
