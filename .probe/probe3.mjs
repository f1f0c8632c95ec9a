import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
const mem = new WebAssembly.Memory({ initial: 72 * 16, maximum: 72 * 16 });
const mod = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: mem }));
const rt = mod.newRuntime();
rt.setMaxStackSize(256 * 1024);
let deadline = performance.now() + 100;
let n = 0;
rt.setInterruptHandler(() => { n++; return performance.now() > deadline });
const ctx = rt.newContext();
function ev(code) { const r = ctx.evalCode(code); const h = r.value ?? r.error; const d = ctx.dump(h); h.dispose(); return [r.error ? "ERR" : "OK", d]; }
console.log(ev(`let c = 0; try { while (true) { c++ } } catch (e) { "caught " + e }`), n);
deadline = performance.now() + 100;
console.log(ev(`1+1`));
deadline = Infinity;
console.log(ev(`new Date(2020, 0, 1).getTimezoneOffset() + " " + new Date(0).toString() + " " + (typeof Atomics)`));
rt.setMemoryLimit(64 * 1048576);
console.log(ev(`try { new Uint8Array(200*1048576).length } catch (e) { String(e) }`));
console.log(ev(`try { const a = []; for (let i = 0; i < 1e7; i++) a.push({i}); a.length } catch (e) { String(e) }`));
console.log(ev(`try { let s = "ab".repeat(1e8); s.length } catch (e) { String(e) }`));
console.log(ev(`try { let s = "ab"; for (let i=0;i<30;i++) s = s + s; s.indexOf("c") } catch (e) { String(e) }`));
console.log(ev(`async function f(){}; import("x").then(()=>1, e => String(e)); typeof import.meta`));
console.log(rt.executePendingJobs());
console.log(ev(`(function(){ try { return (function f(n){ return n == 0 ? 0 : 1 + f(n-1) })(1e6) } catch (e) { return String(e) } })()`));
console.log(ev(`(async function(){}).constructor("return 1+\\n").toString()`));
try {console.log(ev(`new (async function(){}).constructor("a b c")`));} catch(e) {console.log(e)}
console.log(ev(`throw {a:1}`));
ctx.dispose(); rt.dispose();
