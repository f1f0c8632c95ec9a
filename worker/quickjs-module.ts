/**
 * QuickJS WebAssembly modules, one per memory size, each instantiated on its own fixed-size
 * `WebAssembly.Memory` (initial = maximum) so `memoryMb` is a hard cap: `runtime.setMemoryLimit` alone
 * does not bound an emscripten heap. Modules are cached (the two most recently used sizes) and dropped
 * when a run finds one broken (an emscripten abort). A size may have several instances: runs at once in one
 * thread each take an instance no other run holds (`moduleFor`'s `taken`), so one run's heap is never another's. Two builds: the stock package's, and ours (worker/quickjs,
 * scripts/build-quickjs.sh: the same C interface plus bytecode compile/run, see prelude-bytecode.ts), used only
 * when a host hands its compiled .wasm in (`setCompiledWasm(…, "openbot")`: Node worker threads, node-port.ts).
 * Also guards host-to-guest strings: quickjs-emscripten writes them through an unchecked `malloc`, so a string
 * that does not fit would corrupt the heap.
 */
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";
import { OPENBOT_SYNC } from "./quickjs/variant";

/**
 * Which QuickJS build a compiled .wasm is. "openbot" (ours) needs ~3x the native stack per QuickJS stack byte of
 * "stock" (LLVM 14's code; worker/PROGRESS.md), so QuickJS's 256 KiB check only stays ahead of the host's stack
 * where that is large: Node worker threads (64 MiB). Pages and the main thread keep the stock build.
 */
export type QuickJSBuild = "stock" | "openbot";

/**
 * QuickJS's own stack limit (its check on the C stack in linear memory, which throws a catchable
 * InternalError) for each build, set below where the host's native stack runs out first (then the run
 * fails whole, uncatchable). Ours runs in Node worker threads with 64 MiB: 256 KiB. The stock build runs in
 * pages, whose Web Workers have about 1 MiB: measured in Chromium's worker on the product's page, 256 KiB let
 * plain, async, getter and toString recursion exhaust the native stack first, 128 KiB still toString
 * recursion; 96 KiB kept twelve shapes catchable (functions, arrows, async, getters, Proxy traps, map, sort,
 * toJSON, replace callbacks, Reflect.apply, bound functions, toString), and 64 KiB keeps twice that margin
 * (a plain function reaches ~364 calls, toString ~138). Recursion inside QuickJS's own C code (JSON.parse or
 * stringify, flat, the parser) 10,000 levels deep still outruns the native stack in a page.
 */
export function stackBytesFor(build: QuickJSBuild): number {
  return build === "openbot" ? 256 * 1024 : 64 * 1024;
}

/** Memory the module needs besides the program's own: static data, C stack, allocator slack. */
export const MODULE_BASELINE_MB = 8;
/** The QuickJS build declares a 16 MiB minimum memory. */
const MODULE_MIN_MB = 16;
const CACHE_SIZE = 2;

export interface SandboxModule {
  memoryMb: number;
  /** QuickJS's stack limit for runtimes of this module (`stackBytesFor` its build). */
  maxStackBytes: number;
  quickjs: QuickJSWASMModule;
  /** True once the module aborted or a guard found its heap unusable; it is never reused. */
  broken: boolean;
  /** Whether `bytes` more can be allocated right now (probes malloc, then frees). */
  canAllocate(bytes: number): boolean;
  /**
   * How often the allocator asked the fixed memory to grow (it cannot, so each is an allocation that
   * failed for want of memory), not counting `canAllocate`'s probes. Observed by the host on the memory
   * object itself, so no guest value can fake it.
   */
  allocationFailures: number;
  /**
   * Copies a well-formed string into the heap as NUL-terminated UTF-8 with `TextEncoder.encodeInto` (far
   * faster than emscripten's per-character loop for large strings); returns the pointer, to be passed to
   * `free`, or 0 when the string has lone surrogates, TextEncoder is missing or the heap cannot take it.
   */
  copyUtf8(text: string): number;
  /**
   * Copies the parts, one after the other, into one new heap block; returns its pointer (to be passed to
   * `free`), or 0 when the heap cannot take it (not counted as an allocation failure of the program's).
   */
  copyBytes(parts: readonly Uint8Array[]): number;
  free(pointer: number): void;
}

interface EmscriptenHeap {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

/** Per memory size (most recently used last), its instances in the order they were loaded. */
const cache = new Map<number, Promise<SandboxModule>[]>();
/** A compiled QuickJS WebAssembly.Module handed in by the host (see `setCompiledWasm`), or undefined. */
let compiledWasm: WebAssembly.Module | undefined;
let compiledBuild: QuickJSBuild = "stock";

/**
 * Instantiates every later module from this compiled WebAssembly.Module instead of loading and compiling the
 * .wasm again. A Node server compiles it once and hands it to each worker thread: the threads then share its
 * compiled (and tiered-up) code, so a new worker's first run does not start from cold code. A page does the
 * same for its Web Workers (browser-port.ts). `build` says which build it is (default the stock package's);
 * `undefined` goes back to loading the stock package's .wasm.
 */
export function setCompiledWasm(module: WebAssembly.Module | undefined, build: QuickJSBuild = "stock"): void {
  compiledWasm = module;
  compiledBuild = module ? build : "stock";
}

/** Total pages of the fixed memory for a program limit of `memoryMb`. */
export function memoryPagesFor(memoryMb: number): number {
  return Math.max(MODULE_MIN_MB, Math.ceil(memoryMb) + MODULE_BASELINE_MB) * 16;
}

/**
 * A module of this memory size, loading it on first use: the first cached instance that is not broken and
 * not `taken` (a run in this thread holds it), else a new instance, kept for later. Rejects if WebAssembly
 * cannot load it. The caller claims the instance synchronously after the await (two callers may be handed
 * the same one: the second must see it taken and ask again).
 */
export async function moduleFor(memoryMb: number, taken?: (module: SandboxModule) => boolean): Promise<SandboxModule> {
  let instances = cache.get(memoryMb);
  if (instances) cache.delete(memoryMb);
  else instances = [];
  cache.set(memoryMb, instances);
  while (cache.size > CACHE_SIZE) {
    const oldest = cache.keys().next().value;
    if (oldest === undefined) break;
    cache.delete(oldest);
  }
  for (const loading of [...instances]) {
    const module = await loading.catch(() => undefined);
    if (module && !module.broken && !taken?.(module)) return module;
  }
  const loading = loadModule(memoryMb);
  instances.push(loading);
  loading.catch(() => forget(memoryMb, loading));
  return loading;
}

function forget(memoryMb: number, loading: Promise<SandboxModule>): void {
  const instances = cache.get(memoryMb);
  const at = instances?.indexOf(loading) ?? -1;
  if (instances && at >= 0) instances.splice(at, 1);
}

/** Forget a module so the next run of that size loads a fresh one. */
export function evictModule(module: SandboxModule): void {
  module.broken = true;
  for (const loading of [...(cache.get(module.memoryMb) ?? [])]) {
    loading.then(
      (current) => {
        if (current === module) forget(module.memoryMb, loading);
      },
      () => undefined,
    );
  }
}

async function loadModule(memoryMb: number): Promise<SandboxModule> {
  const pages = memoryPagesFor(memoryMb);
  const wasmMemory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const wasmModule = compiledWasm;
  const variant = compiledBuild === "openbot" ? OPENBOT_SYNC : RELEASE_SYNC;
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, wasmModule ? { wasmMemory, wasmModule } : { wasmMemory }),
  );
  const heap = (quickjs as unknown as { module?: Partial<EmscriptenHeap> }).module;
  const malloc = heap?._malloc;
  const free = heap?._free;
  if (typeof malloc !== "function" || typeof free !== "function") {
    throw new Error("the QuickJS build does not expose its allocator");
  }
  let probing = false;
  const bytes = new Uint8Array(wasmMemory.buffer);
  const encoder = typeof TextEncoder === "function" ? new TextEncoder() : undefined;
  const sandbox: SandboxModule = {
    memoryMb,
    maxStackBytes: stackBytesFor(compiledBuild),
    quickjs,
    broken: false,
    allocationFailures: 0,
    canAllocate(bytes) {
      probing = true;
      try {
        const pointer = malloc.call(heap, bytes);
        if (!pointer) return false;
        free.call(heap, pointer);
        return true;
      } finally {
        probing = false;
      }
    },
    copyUtf8(text) {
      if (!encoder || !isWellFormed(text)) return 0;
      const capacity = text.length * 3 + 1;
      // A worst-case buffer that does not fit is no failure of the program's: the exact copy may still fit.
      probing = true;
      let pointer: number;
      try {
        pointer = malloc.call(heap, capacity);
      } finally {
        probing = false;
      }
      if (!pointer) return 0;
      const { written } = encoder.encodeInto(text, bytes.subarray(pointer, pointer + capacity - 1));
      bytes[pointer + written] = 0;
      return pointer;
    },
    copyBytes(parts) {
      let length = 0;
      for (const part of parts) length += part.length;
      probing = true;
      let pointer: number;
      try {
        pointer = malloc.call(heap, Math.max(1, length));
      } finally {
        probing = false;
      }
      if (!pointer) return 0;
      let at = pointer;
      for (const part of parts) {
        bytes.set(part, at);
        at += part.length;
      }
      return pointer;
    },
    free(pointer) {
      free.call(heap, pointer);
    },
  };
  // Emscripten's heap resize calls grow on this very object; with initial = maximum it always fails.
  const grow = wasmMemory.grow.bind(wasmMemory);
  Object.defineProperty(wasmMemory, "grow", {
    value: (delta: number) => {
      if (!probing) sandbox.allocationFailures += 1;
      return grow(delta);
    },
  });
  return sandbox;
}

/** No lone surrogates (encodeInto would write U+FFFD where emscripten writes the surrogate's own bytes). */
function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  if (typeof native === "function") return native.call(text);
  return !/[\uD800-\uDFFF]/.test(text);
}
