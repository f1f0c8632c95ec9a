/**
 * Spawns the bundled Node sandbox worker (dist/worker/node-worker.mjs, built by scripts/build-worker.mjs)
 * as a worker thread and adapts it to the supervisor's `WorkerPort`. Server-only. An exit the supervisor
 * did not ask for is reported as an error, so the run fails `Unavailable` instead of hanging.
 */
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { WorkerPort } from "./supervisor";

/** Where the bundled worker lives; relative to the process's working directory (the repo root). */
export const NODE_WORKER_PATH = path.join(/* turbopackIgnore: true */ process.cwd(), "dist/worker/node-worker.mjs");

/**
 * Native stack of a worker thread. QuickJS's parser and JSON code use far more native stack per level
 * than its own 256 KiB limit accounts for (over 16 MiB measured for nested literals); 64 MiB keeps its
 * check in charge, so deep nesting stays a catchable guest error. Reserved address space, not memory.
 */
export const NODE_WORKER_STACK_MB = 64;

export function spawnNodeWorker(scriptPath: string = NODE_WORKER_PATH): WorkerPort {
  // Built apart by esbuild: the bundler must not try to follow this worker (it is not its module).
  const WorkerThread = Worker;
  const worker = new WorkerThread(/* turbopackIgnore: true */ scriptPath, {
    resourceLimits: { stackSizeMb: NODE_WORKER_STACK_MB },
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
