/**
 * quickjs-emscripten's variant object for OpenBot's QuickJS build (this folder, made by scripts/build-quickjs.sh):
 * its emscripten loader, and the FFI with the bytecode functions (ffi.ts).
 *
 * The loader comes from Debian's emcc 3.1.6, whose `stringToUTF8`/`lengthBytesUTF8` join a lone high surrogate with
 * whatever follows (the character after it is lost); upstream's emcc encodes every code point apart, lone
 * surrogates as three bytes. quickjs-emscripten-core copies host strings in with exactly these two, so the module
 * gets upstream's behaviour here (our own implementation of it) before anything uses it. The other way, its
 * `UTF8ToString` decoded strings of 16 bytes or less by hand, which turns QuickJS's 3-byte form of a lone
 * surrogate back into the surrogate, where TextDecoder (longer strings, and the stock build always) gives
 * U+FFFD for each of its bytes: a log line, text() or an error with one came out differently per build and
 * per length. Strings read out are now pure ASCII copied as is, anything else decoded by TextDecoder.
 */
import type {
  EmscriptenModuleLoaderOptions,
  QuickJSEmscriptenModule,
  QuickJSSyncVariant,
} from "quickjs-emscripten-core";
import { utf8Length } from "../canonical-json";
import loadQuickJS from "./emscripten-module.mjs";
import { BytecodeFFI } from "./ffi";

export const OPENBOT_SYNC: QuickJSSyncVariant = {
  type: "sync",
  importFFI: () => Promise.resolve(BytecodeFFI),
  importModuleLoader: () =>
    Promise.resolve(async (options?: EmscriptenModuleLoaderOptions) => withCodePointUtf8(await loadQuickJS(options))),
};

/**
 * Replaces the module's two UTF-8 encoders with per-code-point ones (a pair is one code point, 4 bytes): the length
 * is canonical-json.ts's `utf8Length`, which counts exactly so.
 */
function withCodePointUtf8(module: QuickJSEmscriptenModule): QuickJSEmscriptenModule {
  const decoder = new TextDecoder();
  module.UTF8ToString = (pointer: number, maxBytes?: number) => {
    if (!pointer) return "";
    const heap = module.HEAPU8;
    const limit = maxBytes === undefined ? heap.length : Math.min(heap.length, pointer + maxBytes);
    let end = pointer;
    let ascii = true;
    for (; end < limit; end++) {
      const byte = heap[end] as number;
      if (byte === 0) break;
      if (byte > 0x7f) ascii = false;
    }
    if (ascii && end - pointer <= 64) {
      let text = "";
      for (let i = pointer; i < end; i++) text += String.fromCharCode(heap[i] as number);
      return text;
    }
    return decoder.decode(heap.subarray(pointer, end));
  };
  module.lengthBytesUTF8 = utf8Length;
  module.stringToUTF8 = (text: string, pointer: number, maxBytes: number) => {
    if (!(maxBytes > 0)) return 0;
    const heap = module.HEAPU8;
    const end = pointer + maxBytes - 1;
    let at = pointer;
    for (let i = 0; i < text.length; i++) {
      const code = text.codePointAt(i) as number;
      if (code <= 0x7f) {
        if (at >= end) break;
        heap[at++] = code;
      } else if (code <= 0x7ff) {
        if (at + 1 >= end) break;
        heap[at++] = 0xc0 | (code >> 6);
        heap[at++] = 0x80 | (code & 63);
      } else if (code <= 0xffff) {
        if (at + 2 >= end) break;
        heap[at++] = 0xe0 | (code >> 12);
        heap[at++] = 0x80 | ((code >> 6) & 63);
        heap[at++] = 0x80 | (code & 63);
      } else {
        if (at + 3 >= end) break;
        heap[at++] = 0xf0 | (code >> 18);
        heap[at++] = 0x80 | ((code >> 12) & 63);
        heap[at++] = 0x80 | ((code >> 6) & 63);
        heap[at++] = 0x80 | (code & 63);
        i++;
      }
    }
    heap[at] = 0;
    return at - pointer;
  };
  return module;
}
