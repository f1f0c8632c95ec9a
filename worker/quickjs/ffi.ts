/**
 * The FFI of OpenBot's QuickJS build (worker/quickjs, made by scripts/build-quickjs.sh): quickjs-emscripten's
 * own for the sync release variant, whose C interface ours includes unchanged, plus the two functions of
 * bytecode.c. Host-only: no guest value reaches these functions (see prelude-bytecode.ts).
 */
import { QuickJSFFI } from "@jitl/quickjs-wasmfile-release-sync/ffi";
import type { JSContextPointer, JSValuePointer, QuickJSEmscriptenModule } from "quickjs-emscripten-core";

export class BytecodeFFI extends QuickJSFFI {
  /**
   * Compiles the NUL-terminated UTF-8 script at `source` (`length` bytes without the NUL) as a global script
   * (strict if `strict` is 1) and returns its bytecode as a new ArrayBuffer value, or the exception.
   */
  readonly QTS_CompileBytecode: (
    ctx: JSContextPointer,
    source: number,
    length: number,
    filename: string,
    strict: number,
  ) => JSValuePointer;
  /** Reads the bytecode at `bytes` (left untouched) and runs it in the global scope: its value or the exception. */
  readonly QTS_EvalBytecode: (ctx: JSContextPointer, bytes: number, length: number) => JSValuePointer;

  constructor(module: QuickJSEmscriptenModule) {
    super(module);
    this.QTS_CompileBytecode = module.cwrap("QTS_CompileBytecode", "number", [
      "number",
      "number",
      "number",
      "string",
      "number",
    ]);
    this.QTS_EvalBytecode = module.cwrap("QTS_EvalBytecode", "number", ["number", "number", "number"]);
  }
}
