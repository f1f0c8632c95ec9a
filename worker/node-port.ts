/**
 * Spawns the bundled Node sandbox worker (dist/worker/node-worker.mjs, built by scripts/build-worker.mjs)
 * as a worker thread and adapts it to the supervisor's `WorkerPort`. Server-only. An exit the supervisor
 * did not ask for is reported as an error, so the run fails `Unavailable` instead of hanging.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { QuickJSBuild } from "./quickjs-module";
import type { WorkerPort } from "./supervisor";

/** Where the bundled worker lives; relative to the process's working directory (the repo root). */
export const NODE_WORKER_PATH = path.join(/* turbopackIgnore: true */ process.cwd(), "dist/worker/node-worker.mjs");

/**
 * Native stack of a worker thread. QuickJS's parser and JSON code use far more native stack per level
 * than its own 256 KiB limit accounts for (over 16 MiB measured for nested literals); 64 MiB keeps its
 * check in charge, so deep nesting stays a catchable guest error. Reserved address space, not memory.
 */
export const NODE_WORKER_STACK_MB = 64;

/**
 * The QuickJS .wasm handed to worker threads: our build (worker/quickjs, with the prelude core run from bytecode),
 * relative to the working directory like the worker. Worker threads have the large native stack it needs.
 */
export const QUICKJS_WASM_PATH = path.join(
  /* turbopackIgnore: true */ process.cwd(),
  "worker/quickjs/emscripten-module.wasm",
);

let compiled: WebAssembly.Module | null | undefined;

/**
 * The QuickJS .wasm compiled once per process (~5 ms), handed to every worker thread: they share its compiled
 * code (V8 shares a module's code between threads, tiered-up code included), so a new worker neither compiles
 * the .wasm again nor runs its first programs on cold code. Null when it cannot be read: workers then load it themselves.
 */
function compiledWasm(): WebAssembly.Module | undefined {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(readFileSync(QUICKJS_WASM_PATH));
    } catch {
      compiled = null;
    }
  }
  return compiled ?? undefined;
}

/**
 * `wasmModule`: the compiled .wasm handed to the worker (default: our build's, compiled once per process); `build`:
 * which build it is. Without a module the worker loads the stock package's .wasm itself.
 */
export function spawnNodeWorker(
  scriptPath: string = NODE_WORKER_PATH,
  wasmModule: WebAssembly.Module | undefined = compiledWasm(),
  build: QuickJSBuild = "openbot",
): WorkerPort {
  // Built apart by esbuild: the bundler must not try to follow this worker (it is not its module).
  const WorkerThread = Worker;
  const worker = new WorkerThread(/* turbopackIgnore: true */ scriptPath, {
    resourceLimits: { stackSizeMb: NODE_WORKER_STACK_MB },
    workerData: wasmModule ? { wasmModule, build } : undefined,
  });
  worker.unref();
  let terminated = false;
  const errorListeners: ((error: unknown) => void)[] = [];
  const report = (error: unknown) => {
    for (const listener of errorListeners) listener(error);
  };
  worker.on("error", report);
  worker.on("messageerror", report);
  worker.on("exit", (code) => {
    if (!terminated) report(new Error(`the sandbox worker exited with code ${code}`));
  });
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.on("message", listener),
    onError: (listener) => errorListeners.push(listener),
    terminate: () => {
      terminated = true;
      void worker.terminate();
    },
  };
}
