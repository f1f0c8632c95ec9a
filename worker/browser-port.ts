/**
 * Spawns the sandbox Web Worker (browser-worker.ts, bundled by Next.js from the `new URL(…,
 * import.meta.url)` form) and adapts it to the supervisor's `WorkerPort`. Browser-only.
 *
 * The page compiles the QuickJS .wasm once (`compileSandboxWasm`, streaming) and hands the compiled
 * WebAssembly.Module to every worker it spawns (a worker named `SHARED_WASM_WORKER` waits for one "wasm"
 * message before it loads its engine). Workers instantiated from one Module share its compiled code, so a
 * new worker neither fetches nor compiles the .wasm again and does not start from cold code: its warm-up run
 * and first run use functions an earlier worker already compiled and tiered up. If the page cannot compile
 * it (no WebAssembly streaming, a failed fetch), the worker gets `null` and loads the .wasm itself as before.
 */
import { SHARED_WASM_WORKER, type WasmMessage } from "./shared-wasm";
import type { WorkerPort } from "./supervisor";

const compiled = new Map<string, Promise<WebAssembly.Module | null>>();

/** The QuickJS .wasm the worker's engine uses, as the page's bundler emits it. */
function bundledWasmUrl(): URL {
  return new URL("../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm", import.meta.url);
}

/**
 * Fetches and compiles the QuickJS .wasm once per URL (streaming where the browser can), for every worker
 * this page spawns; resolves null (never rejects) if it cannot. Call it when the page is idle to take the
 * fetch and compile off the first run's path.
 */
export function compileSandboxWasm(url: string | URL = bundledWasmUrl()): Promise<WebAssembly.Module | null> {
  const key = String(url);
  let module = compiled.get(key);
  if (!module) {
    module = compileWasm(key).catch(() => null);
    compiled.set(key, module);
  }
  return module;
}

async function compileWasm(url: string): Promise<WebAssembly.Module> {
  if (typeof WebAssembly.compileStreaming === "function") {
    try {
      return await WebAssembly.compileStreaming(fetch(url, { credentials: "same-origin" }));
    } catch {
      // A server that labels the .wasm with another media type: compile from the bytes instead.
    }
  }
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`the sandbox .wasm answered ${response.status}`);
  return WebAssembly.compile(await response.arrayBuffer());
}

/** The sandbox worker of this app's bundle, sharing the page's compiled .wasm. */
export function spawnBrowserWorker(): WorkerPort {
  const worker = new Worker(new URL("./browser-worker.ts", import.meta.url), {
    type: "module",
    name: SHARED_WASM_WORKER,
  });
  return portOf(worker, compileSandboxWasm());
}

/**
 * A sandbox worker from a script at `workerUrl` (a bundle of browser-worker.ts made elsewhere, e.g. the
 * browser benchmark), sharing the page's compile of the .wasm at `wasmUrl`.
 */
export function spawnSandboxWorker(workerUrl: string | URL, wasmUrl: string | URL): WorkerPort {
  const worker = new Worker(workerUrl, { type: "module", name: SHARED_WASM_WORKER });
  return portOf(worker, compileSandboxWasm(wasmUrl));
}

function portOf(worker: Worker, wasm: Promise<WebAssembly.Module | null>): WorkerPort {
  void wasm.then((module) => worker.postMessage({ type: "wasm", module } satisfies WasmMessage));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.addEventListener("message", (event) => listener(event.data)),
    onError: (listener) => {
      worker.addEventListener("error", (event) => {
        event.preventDefault();
        listener(new Error(event.message || "the sandbox worker failed"));
      });
      worker.addEventListener("messageerror", () =>
        listener(new Error("the sandbox worker sent an unreadable message")),
      );
    },
    terminate: () => worker.terminate(),
  };
}
