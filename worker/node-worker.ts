/**
 * Node worker_threads entry of the sandbox: adapts `parentPort` to the shared worker host. Bundled by
 * scripts/build-worker.mjs to dist/worker/node-worker.mjs, which the server spawns via node-port.ts.
 */
import { parentPort } from "node:worker_threads";
import { serveEngine } from "./worker-host";

const port = parentPort;
if (!port) throw new Error("node-worker.ts must run in a worker thread");
serveEngine({
  post: (message) => port.postMessage(message),
  onMessage: (listener) => port.on("message", listener),
});
