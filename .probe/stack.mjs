import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
const hostDepth = Number(process.argv[2] ?? 0);
for (const kb of [64, 128, 192, 256]) {
  const mod = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: new WebAssembly.Memory({ initial: 48 * 16, maximum: 48 * 16 }) }));
  for (const code of [
    `let a = []; for (let i = 0; i < 2e4; i++) a = [a]; try { JSON.stringify(a).length } catch (e) { String(e) }`,
    `try { JSON.parse("[".repeat(2e4) + "]".repeat(2e4)) ; "parsed"} catch (e) { String(e) }`,
    `let d = 0; function f() { d++; f() } try { f() } catch (e) { String(e) + " depth " + d }`,
    `let o = {}; for (let i = 0; i < 2e4; i++) o = {o}; try { String(structuredClone) } catch (e) {}; let s = 0; function walk(x) { if (x.o) walk(x.o); s++ } try { walk(o); s } catch (e) { String(e) + s }`,
    `let d = 0; const p = new Proxy({}, { get: (t, k) => { d++; return p[k] } }); try { p.x } catch (e) { String(e) + " depth " + d }`,
    `let r = /(a|b)*c/; try { r.test("ab".repeat(2e4)) } catch (e) { String(e) }`,
  ]) {
    const rt = mod.newRuntime(); rt.setMaxStackSize(kb * 1024); const ctx = rt.newContext();
    let out;
    const recurse = (n) => n === 0 ? ctx.evalCode(code) : recurse(n - 1);
    try { const r = recurse(hostDepth); out = ctx.dump(r.value ?? r.error); (r.value ?? r.error).dispose(); } catch (e) { out = "HOST " + e.message; }
    try { ctx.dispose(); rt.dispose(); } catch (e) { out += " / DISPOSE " + e.message.slice(0, 60); }
    console.log(kb, code.slice(0, 30), "=>", String(out).slice(0, 80));
  }
}
