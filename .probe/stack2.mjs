import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
const kb = Number(process.argv[2]);
const which = Number(process.argv[3]);
const codes = [
    `let a = []; for (let i = 0; i < 2e4; i++) a = [a]; try { JSON.stringify(a).length } catch (e) { String(e) }`,
    `try { JSON.parse("[".repeat(2e4) + "]".repeat(2e4)) ; "parsed"} catch (e) { String(e) }`,
    `let d = 0; function f() { d++; f() } try { f() } catch (e) { String(e) + " depth " + d }`,
    `let d = 0; const p = new Proxy({}, { get: (t, k) => { d++; return p[k] } }); try { p.x } catch (e) { String(e) + " depth " + d }`,
    `let a = []; for (let i = 0; i < 2e4; i++) a = [a]; try { String(a).length } catch (e) { String(e) }`,
    `try { eval("(".repeat(2e4) + "1" + ")".repeat(2e4)) } catch (e) { String(e) }`,
    `let a = []; for (let i = 0; i < 2e4; i++) a = [a]; try { a.flat(Infinity).length } catch (e) { String(e) }`,
    `let o = {}; for (let i = 0; i < 2e4; i++) o = {o, toJSON() { return this.o }}; try { JSON.stringify(o) } catch (e) { String(e) }`,
    `let d = 0; function f() { d++; return [1].map(f) } try { f() } catch (e) { String(e) + " depth " + d }`,
    `let d = 0; const o = { get x() { d++; return this.x } }; try { o.x } catch (e) { String(e) + " depth " + d }`,
    `let a = {}; for (let i = 0; i < 2e4; i++) a = {a}; try { Object.freeze(a); structuredClone } catch (e) { String(e) }`,
    `try { new RegExp("(".repeat(2e4) + "a" + ")".repeat(2e4)).test("a") } catch (e) { String(e) }`,
];
const mod = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: new WebAssembly.Memory({ initial: 48 * 16, maximum: 48 * 16 }) }));
const rt = mod.newRuntime(); rt.setMaxStackSize(kb * 1024); const ctx = rt.newContext();
let out;
try { const r = ctx.evalCode(codes[which]); out = ctx.dump(r.value ?? r.error); (r.value ?? r.error).dispose(); } catch (e) { out = "HOST " + e.message; }
console.log("stack", kb, which, String(out).slice(0, 70));
