/**
 * Spawns the sandbox Web Worker (browser-worker.ts, bundled by Next.js from the `new URL(…,
 * import.meta.url)` form) and adapts it to the supervisor's `WorkerPort`. Browser-only.
 */
import type { WorkerPort } from "./supervisor";

export function spawnBrowserWorker(): WorkerPort {
  const worker = new Worker(new URL("./browser-worker.ts", import.meta.url), { type: "module" });
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
