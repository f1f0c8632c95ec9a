/**
 * Node worker_threads entry of the sandbox: adapts `parentPort` to the shared worker host. Bundled by
 * scripts/build-worker.mjs to dist/worker/node-worker.mjs, which the server spawns via node-port.ts (with the
 * QuickJS .wasm compiled once by the server in `workerData.wasmModule`, and the inbox port and doorbell of
 * doorbell.ts). With a doorbell, `hold` lets the host block this thread for the driver's next message (a
 * call's answers, the next run) and take it with `receiveMessageOnPort`, skipping the event loop's wake-up.
 */
import { MessagePort, parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { DOORBELL_RUNG, DOORBELL_TAKEN, doorbellOf, waitRung } from "./doorbell";
import { loadEngine } from "./engine";
import { serveEngine } from "./worker-host";

const port = parentPort;
if (!port) throw new Error("node-worker.ts must run in a worker thread");
const data = (workerData ?? {}) as { wasmModule?: unknown; inbox?: unknown; doorbell?: unknown };
// The spawning process may hand over the .wasm it compiled once (node-port.ts); else the engine loads its own.
const wasmModule = data.wasmModule instanceof WebAssembly.Module ? data.wasmModule : undefined;
const bell = doorbellOf(data.doorbell);
const inbox = bell && data.inbox instanceof MessagePort ? data.inbox : undefined;

const listeners: ((message: unknown) => void)[] = [];
const deliver = (message: unknown): void => {
  for (const listener of listeners) listener(message);
};
port.on("message", deliver);
inbox?.on("message", deliver);

/** The driver's next message if it arrives within `timeoutMs`, taken without the event loop. */
function receive(timeoutMs: number): { message: unknown } | undefined {
  if (!bell || !inbox) return undefined;
  const end = performance.now() + timeoutMs;
  for (;;) {
    const seen = Atomics.load(bell, DOORBELL_RUNG);
    const got = receiveMessageOnPort(inbox);
    if (got) {
      Atomics.add(bell, DOORBELL_TAKEN, 1);
      return got;
    }
    const left = end - performance.now();
    if (left <= 0 || !waitRung(bell, seen, left)) return undefined;
  }
}

serveEngine(
  {
    post: (message) => port.postMessage(message),
    onMessage: (listener) => listeners.push(listener),
    hold: inbox
      ? (timeoutMs) => {
          // After the jobs already queued (the engine's promise reactions) have run.
          setImmediate(() => {
            const ms = timeoutMs();
            if (ms <= 0) return;
            const got = receive(ms);
            if (got) deliver(got.message);
          });
        }
      : undefined,
  },
  () => loadEngine({ wasmModule }),
);
