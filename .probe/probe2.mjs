import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
const pagesMb = Number(process.argv[2] ?? 16);
const mem = new WebAssembly.Memory({ initial: pagesMb * 16, maximum: pagesMb * 16 });
let t = performance.now();
const mod = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: mem }));
console.log("load ms", performance.now() - t);
for (let i = 0; i < 3; i++) {
  const rt = mod.newRuntime();
  rt.setMaxStackSize(256 * 1024);
  const ctx = rt.newContext();
  const r = ctx.evalCode(`
    let total = 0; const keep = [];
    try { while (true) { keep.push(new Uint8Array(1 << 20)); total++ } } catch (e) { String(e) + " after MB " + total }
  `);
  console.log(i, ctx.dump(r.value ?? r.error)); (r.value ?? r.error).dispose();
  const r2 = ctx.evalCode(`let s = "x"; try { while (true) s = s + s; } catch (e) { String(e) + " len " + s.length }`);
  console.log(i, ctx.dump(r2.value ?? r2.error)); (r2.value ?? r2.error).dispose();
  const r3 = ctx.evalCode(`function f(n){return f(n+1)+1}; try { f(0) } catch (e) { String(e) }`);
  console.log(i, ctx.dump(r3.value ?? r3.error)); (r3.value ?? r3.error).dispose();
  const r4 = ctx.evalCode(`Object.getOwnPropertyNames(globalThis).join(",")`);
  if (i === 0) console.log(ctx.dump(r4.value ?? r4.error)); (r4.value ?? r4.error).dispose();
  ctx.dispose(); rt.dispose();
}
console.log("buffer", mem.buffer.byteLength / 1048576);
