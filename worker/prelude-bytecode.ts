/**
 * Runs the prelude's core from bytecode instead of compiling its source for every prepared context: our QuickJS
 * build (worker/quickjs) compiles the core once per loaded module, in a scratch runtime, and each context then
 * reads and runs that bytecode (a fraction of the cost of parsing and compiling ~12 K characters).
 *
 * Trust: QuickJS does not validate bytecode, so reading bytes someone else chose could corrupt the heap. The
 * only bytecode ever read here is what this file compiled from `PRELUDE_SOURCE` (a constant of ours), in this
 * same process. It is kept in host memory (a Uint8Array), not in the module's heap where guest programs run:
 * each preparation copies it in, reads it and frees the copy, so not even a program that corrupted its heap
 * could plant bytes for a later run. No guest-reachable function reads bytecode (the FFI is host-only). With
 * a build that lacks the two functions, the core is compiled from source.
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { PRELUDE_SOURCE } from "./prelude";
import type { SandboxModule } from "./quickjs-module";

/** The file name the core's functions report in stack traces, as when compiled from source. */
const PRELUDE_FILE = "prelude.js";

/** The bits of quickjs-emscripten-core's context used here (checked before use); see quickjs/ffi.ts. */
interface ContextInternals {
  ffi: {
    QTS_CompileBytecode?(ctx: number, source: number, length: number, filename: string, strict: number): number;
    QTS_EvalBytecode?(ctx: number, bytes: number, length: number): number;
    QTS_ResolveException(ctx: number, value: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
  };
  ctx: { value: number };
  memory: { heapValueHandle(pointer: number): QuickJSHandle };
}

/** Per module: its core's bytecode (host memory), or null when it could not be made (the source path is used). */
const compiled = new WeakMap<SandboxModule, Uint8Array | null>();
let compileCount = 0;

/** How many times the core was compiled to bytecode, over all modules (for tests). */
export function preludeBytecodeCompiles(): number {
  return compileCount;
}

export type CoreResult = { value: QuickJSHandle; error?: undefined } | { error: QuickJSHandle; value?: undefined };

/** Evaluates the prelude's core in `ctx` (a context of `module`): its completion value, or the exception. */
export function evalPreludeCore(module: SandboxModule, ctx: QuickJSContext): CoreResult {
  const inner = internals(ctx);
  const code = inner?.ffi.QTS_EvalBytecode ? bytecodeOf(module) : null;
  if (!inner?.ffi.QTS_EvalBytecode || !code) return evalPreludeSource(ctx);
  const pointer = module.copyBytes([code]);
  if (!pointer) return evalPreludeSource(ctx);
  try {
    return resolve(inner, inner.ffi.QTS_EvalBytecode(inner.ctx.value, pointer, code.length));
  } finally {
    // JS_ReadObject copies what it reads; the bytes are not referenced after it.
    module.free(pointer);
  }
}

/** Compiles and evaluates the prelude's core from its source (any build; the benchmark's other side). */
export function evalPreludeSource(ctx: QuickJSContext): CoreResult {
  return ctx.evalCode(PRELUDE_SOURCE, PRELUDE_FILE, { type: "global", strict: true });
}

/** Whether `module` runs the core from bytecode (compiling it now if not yet tried). */
export function usesPreludeBytecode(module: SandboxModule): boolean {
  const ffi = (module.quickjs as unknown as { getFFI?: () => Partial<ContextInternals["ffi"]> }).getFFI?.();
  return typeof ffi?.QTS_EvalBytecode === "function" && bytecodeOf(module) !== null;
}

function bytecodeOf(module: SandboxModule): Uint8Array | null {
  let code = compiled.get(module);
  if (code === undefined) {
    code = compileCore(module);
    // A heap too full right now (undefined) is tried again by the next preparation; the source serves meanwhile.
    if (code === undefined) return null;
    compiled.set(module, code);
  }
  return code;
}

/**
 * Compiles the core in a scratch runtime of `module` and copies its bytecode out to host memory: null if the
 * build cannot (no bytecode functions), undefined if it could not right now (the heap had no room).
 */
function compileCore(module: SandboxModule): Uint8Array | null | undefined {
  if (typeof TextEncoder !== "function") return null;
  const runtime = module.quickjs.newRuntime();
  try {
    const ctx = runtime.newContext();
    try {
      const inner = internals(ctx);
      if (!inner?.ffi.QTS_CompileBytecode || !inner.ffi.QTS_EvalBytecode) return null;
      const source = new TextEncoder().encode(PRELUDE_SOURCE);
      const sourcePointer = module.copyBytes([source, new Uint8Array(1)]);
      if (!sourcePointer) return undefined;
      let result: CoreResult;
      try {
        result = resolve(
          inner,
          inner.ffi.QTS_CompileBytecode(inner.ctx.value, sourcePointer, source.length, PRELUDE_FILE, 1),
        );
      } finally {
        module.free(sourcePointer);
      }
      if (result.error) {
        // Out of memory while compiling (our own constant source compiles otherwise; the tests prove it).
        result.error.dispose();
        return undefined;
      }
      const bytes = ctx.getArrayBuffer(result.value);
      result.value.dispose();
      try {
        compileCount += 1;
        return bytes.value.slice();
      } finally {
        bytes.dispose();
      }
    } finally {
      ctx.dispose();
    }
  } finally {
    runtime.dispose();
  }
}

/** A result pointer of the FFI as a handle, or the exception it holds (as quickjs-emscripten's `evalCode`). */
function resolve(inner: ContextInternals, resultPointer: number): CoreResult {
  const errorPointer = inner.ffi.QTS_ResolveException(inner.ctx.value, resultPointer);
  if (errorPointer) {
    inner.ffi.QTS_FreeValuePointer(inner.ctx.value, resultPointer);
    return { error: inner.memory.heapValueHandle(errorPointer) };
  }
  return { value: inner.memory.heapValueHandle(resultPointer) };
}

function internals(ctx: QuickJSContext): ContextInternals | undefined {
  const inner = ctx as unknown as Partial<ContextInternals>;
  if (!inner.ffi || !inner.ctx || !inner.memory || typeof inner.ffi.QTS_ResolveException !== "function")
    return undefined;
  return inner as ContextInternals;
}
