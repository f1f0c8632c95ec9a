/**
 * How a page hands its compiled QuickJS module to a sandbox Web Worker (browser-port.ts spawns, browser-worker.ts
 * receives): a worker with this `name` waits for one `WasmMessage` before it loads its engine.
 */

/** The Worker `name` that tells browser-worker.ts to wait for the page's compiled module. */
export const SHARED_WASM_WORKER = "openbot-sandbox+wasm";

/** What the page posts first to a `SHARED_WASM_WORKER`: the compiled module, or null to load its own. */
export interface WasmMessage {
  type: "wasm";
  module: WebAssembly.Module | null;
}
