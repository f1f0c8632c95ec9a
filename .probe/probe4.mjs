import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
const mod = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: new WebAssembly.Memory({ initial: 24 * 16, maximum: 24 * 16 }) }));
const rt = mod.newRuntime();
const ctx = rt.newContext();
function ev(code) { const r = ctx.evalCode(code); const h = r.value ?? r.error; const d = ctx.dump(h); h.dispose(); return [r.error ? "ERR" : "OK", d]; }
console.log(ev(`[new Date(0).toLocaleString(), new Date(0).toLocaleDateString(), new Date(0).toLocaleTimeString(), new Date(0).toString(), new Date(0).toDateString(), new Date(0).toTimeString(), new Date(0).toUTCString(), String(Date())]`));
console.log(ev(`var o = {}; try { o.x.y() } catch (e) { String(e) }`));
console.log(ev(`var o = {a:{}}; try { o.a.y() } catch (e) { String(e) }`));
console.log(ev(`typeof new Error("x").stack + JSON.stringify(new Error("x").stack)`));
console.log(ev(`(function(){ try { null.x } catch (e) { return e.stack } })()`));
// host string OOM
let big = "y".repeat(30 * 1048576);
try { const h = ctx.newString(big); console.log("newString ok", ctx.typeof(h)); h.dispose() } catch (e) { console.log("newString threw", e.message) }
console.log(ev(`1+1`));
ctx.dispose(); rt.dispose();
