/**
 * Web Worker entry of the sandbox: adapts the worker global's postMessage to the shared worker host.
 * The page creates it through browser-port.ts (`new URL("./browser-worker.ts", import.meta.url)`). A worker
 * named `SHARED_WASM_WORKER` first waits for the page's "wasm" message and instantiates the page's compiled
 * QuickJS module (falling back to loading the .wasm itself if that module is null or cannot be used).
 */
import { loadEngine } from "./engine";
import { setCompiledWasm } from "./quickjs-module";
import { SHARED_WASM_WORKER, type WasmMessage } from "./shared-wasm";
import { serveEngine, type WorkerMessage } from "./worker-host";

interface WorkerScope {
  name?: string;
  postMessage(message: WorkerMessage): void;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

const scope = globalThis as unknown as WorkerScope;

function pageWasm(): Promise<WebAssembly.Module | null> {
  if (scope.name !== SHARED_WASM_WORKER) return Promise.resolve(null);
  return new Promise((resolve) => {
    const listener = (event: MessageEvent): void => {
      const message = event.data as Partial<WasmMessage> | null;
      if (message?.type !== "wasm") return;
      scope.removeEventListener("message", listener);
      resolve(message.module instanceof WebAssembly.Module ? message.module : null);
    };
    scope.addEventListener("message", listener);
  });
}

async function load() {
  const module = await pageWasm();
  if (module) {
    try {
      return await loadEngine({ wasmModule: module });
    } catch {
      setCompiledWasm(undefined);
    }
  }
  return loadEngine();
}

serveEngine(
  {
    post: (message) => scope.postMessage(message),
    onMessage: (listener) => scope.addEventListener("message", (event) => listener(event.data)),
  },
  load,
);
