/*
 * OpenBot's addition to quickjs-emscripten's C interface (c/interface.c of v0.32.0, included whole below so
 * the build is upstream's interface plus these two functions, nothing changed).
 *
 * Bytecode is only ever produced by the host from its own prelude, in the same process, and read back by the
 * host when it prepares a context: a guest program can reach neither function (the FFI object is host-only),
 * so JS_ReadObject never sees bytes a program chose. QuickJS does not validate bytecode; reading foreign
 * bytes could corrupt the heap, hence the rule.
 */
#include "interface.c"

/*
 * Compiles `js_code` as a global script (JS_EVAL_FLAG_COMPILE_ONLY, strict if `strict`) and returns its
 * bytecode (JS_WriteObject with JS_WRITE_OBJ_BYTECODE) as a new ArrayBuffer, or the exception.
 */
JSValue *QTS_CompileBytecode(JSContext *ctx, BorrowedHeapChar *js_code, size_t js_code_length, const char *filename, int strict) {
  int flags = JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY | (strict ? JS_EVAL_FLAG_STRICT : 0);
  JSValue func = JS_Eval(ctx, js_code, js_code_length, filename, flags);
  if (JS_IsException(func))
    return jsvalue_to_heap(func);

  size_t length;
  uint8_t *buffer = JS_WriteObject(ctx, &length, func, JS_WRITE_OBJ_BYTECODE);
  JS_FreeValue(ctx, func);
  if (!buffer)
    return jsvalue_to_heap(JS_EXCEPTION);

  JSValue array = JS_NewArrayBufferCopy(ctx, buffer, length);
  js_free(ctx, buffer);
  return jsvalue_to_heap(array);
}

/*
 * Reads bytecode made by QTS_CompileBytecode (the `length` bytes at `bytes`, left untouched) and runs it in
 * `ctx`'s global scope: the script's completion value, or the exception, as QTS_Eval returns them.
 */
JSValue *QTS_EvalBytecode(JSContext *ctx, const uint8_t *bytes, size_t length) {
  JSValue func = JS_ReadObject(ctx, bytes, length, JS_READ_OBJ_BYTECODE);
  if (JS_IsException(func))
    return jsvalue_to_heap(func);
  /* JS_EvalFunction takes ownership of func. */
  return jsvalue_to_heap(JS_EvalFunction(ctx, func));
}
