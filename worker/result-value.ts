/**
 * A large call result reaches the guest as a value decoded from QuickJS's binary object format
 * (`JS_ReadObject`) instead of as JSON text for the guest's own JSON.parse, which is most of a big-result run
 * (worker/PROGRESS.md has the figures). The host transcodes the text (bjson-ascii.ts for all-ASCII text,
 * else bjson.ts), copies the bytes into the
 * heap and lets QuickJS decode them; the prelude takes the value from a null-prototype box `{ v }` (a string
 * answer is still text). Any failure — not strict JSON, too deep, the heap cannot take the bytes, decoding
 * fails (out of memory), or this QuickJS build writes another format — returns undefined and the caller
 * keeps the text path, so every result is still parsed exactly as before when this cannot be used.
 */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { joinParts, jsonToBinary, SELF_CHECK_JSON } from "./bjson";
import { asciiToBinary, SELF_CHECK_ASCII, transcodeJson } from "./bjson-ascii";
import { CANONICAL_MAX_DEPTH } from "./canonical-json";
import type { SandboxModule } from "./quickjs-module";

/** Results shorter than this stay text: at 4–8 K characters both paths measured the same (CPU per run). */
export const BINARY_MIN_CHARS = 8192;
/** Longer results stay text too, so the host's transcoding buffers stay bounded (~2× the text). */
export const BINARY_MAX_CHARS = 1 << 24;

/** What the engine reaches inside quickjs-emscripten-core 0.32's context (checked before use). */
interface ContextInternals {
  ffi: {
    QTS_NewArrayBuffer(ctx: number, pointer: number, length: number): number;
    QTS_bjson_decode(ctx: number, data: number): number;
    QTS_ResolveException(ctx: number, maybeException: number): number;
    QTS_FreeValuePointer(ctx: number, value: number): void;
  };
  ctx: { value: number };
}

/** Per module: whether the transcoder writes exactly what this build's encoder writes. */
const formatChecked = new WeakMap<SandboxModule, boolean>();
let decodedResults = 0;

/** How many call results so far reached a guest through the binary path (for tests). */
export function binaryResultCount(): number {
  return decodedResults;
}

/**
 * The result as a `{ v: value }` box (null prototype) in `ctx`, or undefined when the text path must be used.
 * The caller owns the handle.
 */
export function binaryResult(ctx: QuickJSContext, module: SandboxModule, text: string): QuickJSHandle | undefined {
  if (text.length < BINARY_MIN_CHARS || text.length > BINARY_MAX_CHARS) return undefined;
  const inner = internalsOf(ctx);
  if (!inner || !formatMatches(module)) return undefined;
  const parts = transcodeJson(text, CANONICAL_MAX_DEPTH);
  if (!parts) return undefined;
  const value = decode(ctx, inner, module, parts);
  if (!value) return undefined;
  const box = ctx.newObject(ctx.null);
  ctx.setProp(box, "v", value);
  value.dispose();
  decodedResults += 1;
  return box;
}

function internalsOf(ctx: QuickJSContext): ContextInternals | undefined {
  const inner = ctx as unknown as Partial<ContextInternals>;
  const ffi = inner.ffi as Partial<ContextInternals["ffi"]> | undefined;
  if (!ffi || !inner.ctx || typeof inner.ctx.value !== "number") return undefined;
  if (
    typeof ffi.QTS_NewArrayBuffer !== "function" ||
    typeof ffi.QTS_bjson_decode !== "function" ||
    typeof ffi.QTS_ResolveException !== "function" ||
    typeof ffi.QTS_FreeValuePointer !== "function"
  ) {
    return undefined;
  }
  return inner as ContextInternals;
}

/** Decodes the bytes in `ctx`; undefined (with nothing left behind) if the heap or the decoder fails. */
function decode(
  ctx: QuickJSContext,
  inner: ContextInternals,
  module: SandboxModule,
  parts: readonly Uint8Array[],
): QuickJSHandle | undefined {
  const { ffi } = inner;
  const context = inner.ctx.value;
  let length = 0;
  for (const part of parts) length += part.length;
  const pointer = module.copyBytes(parts);
  if (!pointer) return undefined;
  // The ArrayBuffer takes the block over (QuickJS frees it with the buffer); if it cannot be made, it is ours.
  const buffer = ffi.QTS_NewArrayBuffer(context, pointer, length);
  if (!settled(inner, buffer)) {
    module.free(pointer);
    return undefined;
  }
  let value: number;
  try {
    value = ffi.QTS_bjson_decode(context, buffer);
  } finally {
    ffi.QTS_FreeValuePointer(context, buffer);
  }
  if (!settled(inner, value)) return undefined;
  return heapHandle(ctx, value);
}

/** False (the exception cleared and both values freed) if `value` is QuickJS's exception marker. */
function settled(inner: ContextInternals, value: number): boolean {
  const { ffi } = inner;
  const context = inner.ctx.value;
  const error = ffi.QTS_ResolveException(context, value);
  if (!error) return true;
  ffi.QTS_FreeValuePointer(context, error);
  ffi.QTS_FreeValuePointer(context, value);
  return false;
}

/** Wraps a heap value pointer as a handle the context owns (quickjs-emscripten's own `heapValueHandle`). */
function heapHandle(ctx: QuickJSContext, value: number): QuickJSHandle {
  const memory = (ctx as unknown as { memory: { heapValueHandle(pointer: number): QuickJSHandle } }).memory;
  return memory.heapValueHandle(value);
}

/**
 * Once per module, in a throwaway context (the run's own globals may be the program's by now): QuickJS's
 * encodings of `SELF_CHECK_JSON` (the general transcoder) and `SELF_CHECK_ASCII` (its ASCII fast path)
 * parsed by its JSON.parse must equal the transcoder's byte for byte.
 */
function formatMatches(module: SandboxModule): boolean {
  const known = formatChecked.get(module);
  if (known !== undefined) return known;
  let matches: boolean;
  try {
    const runtime = module.quickjs.newRuntime();
    try {
      const ctx = runtime.newContext();
      try {
        const general = jsonToBinary(SELF_CHECK_JSON, CANONICAL_MAX_DEPTH);
        const ascii = asciiToBinary(SELF_CHECK_ASCII, CANONICAL_MAX_DEPTH);
        matches =
          general !== undefined &&
          Array.isArray(ascii) &&
          sameBytes(encodedByQuickJs(ctx, SELF_CHECK_JSON), joinParts(general)) &&
          sameBytes(encodedByQuickJs(ctx, SELF_CHECK_ASCII), joinParts(ascii));
      } finally {
        ctx.dispose();
      }
    } finally {
      runtime.dispose();
    }
  } catch {
    // The heap could not run the check now (or the build lacks the encoder): text path, check again later.
    return false;
  }
  formatChecked.set(module, matches);
  return matches;
}

function encodedByQuickJs(ctx: QuickJSContext, text: string): Uint8Array {
  const parsed = ctx.unwrapResult(ctx.evalCode(`JSON.parse(${JSON.stringify(text)})`));
  try {
    const encoded = ctx.encodeBinaryJSON(parsed);
    try {
      const bytes = ctx.getArrayBuffer(encoded);
      try {
        return bytes.value.slice();
      } finally {
        bytes.dispose();
      }
    } finally {
      encoded.dispose();
    }
  } finally {
    parsed.dispose();
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
