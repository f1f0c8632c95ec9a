/**
 * Web Worker entry of the sandbox: adapts the worker global's postMessage to the shared worker host.
 * The page creates it through browser-port.ts (`new URL("./browser-worker.ts", import.meta.url)`).
 */
import { serveEngine, type WorkerMessage } from "./worker-host";

interface WorkerScope {
  postMessage(message: WorkerMessage): void;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
serveEngine({
  post: (message) => scope.postMessage(message),
  onMessage: (listener) => scope.addEventListener("message", (event) => listener(event.data)),
});
