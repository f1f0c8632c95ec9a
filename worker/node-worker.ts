/**
 * Node worker_threads entry of the sandbox: adapts `parentPort` to the shared worker host. Bundled by
 * scripts/build-worker.mjs to dist/worker/node-worker.mjs, which the server spawns via node-port.ts (with the
 * QuickJS .wasm compiled once by the server in `workerData.wasmModule`, which build it is in `workerData.build`).
 */
import { parentPort, workerData } from "node:worker_threads";
import { loadEngine } from "./engine";
import { threadCpuClock } from "./thread-clock";
import { serveEngine } from "./worker-host";

const port = parentPort;
if (!port) throw new Error("node-worker.ts must run in a worker thread");
// The spawning process may hand over the .wasm it compiled once (node-port.ts); else the engine loads its own.
const data = workerData as { wasmModule?: unknown; build?: unknown } | null;
const wasmModule = data?.wasmModule instanceof WebAssembly.Module ? data.wasmModule : undefined;
const build = data?.build === "openbot" ? "openbot" : "stock";
serveEngine(
  {
    post: (message) => port.postMessage(message),
    onMessage: (listener) => port.on("message", listener),
  },
  () => loadEngine({ wasmModule, build }),
  threadCpuClock(),
);
