/**
 * The doorbell between a driver and a Node sandbox worker thread (node-port.ts rings it, node-worker.ts
 * waits on it): an Int32Array over a SharedArrayBuffer whose [DOORBELL_RUNG] the driver increments and
 * `Atomics.notify`s after each message it posts to the worker's inbox port, and whose [DOORBELL_TAKEN] the
 * worker increments for each message it took synchronously (blocked in `waitRung`) rather than as an event.
 * The messages themselves travel on a MessagePort (structured clone, any size); the bell only wakes the
 * worker without a trip through its event loop. Free of the engine and of `node:` imports.
 */

export const DOORBELL_RUNG = 0;
export const DOORBELL_TAKEN = 1;

/** A new doorbell, or undefined where memory cannot be shared. */
export function createDoorbell(): Int32Array | undefined {
  if (typeof SharedArrayBuffer !== "function" || typeof Atomics !== "object") return undefined;
  return new Int32Array(new SharedArrayBuffer(8));
}

/** The driver's side: called right after a message was posted to the worker's inbox. */
export function ring(bell: Int32Array): void {
  Atomics.add(bell, DOORBELL_RUNG, 1);
  Atomics.notify(bell, DOORBELL_RUNG);
}

/** The worker's view of a doorbell that arrived in workerData, or undefined if it is not one. */
export function doorbellOf(buffer: unknown): Int32Array | undefined {
  if (typeof SharedArrayBuffer !== "function" || !(buffer instanceof SharedArrayBuffer) || buffer.byteLength < 8) {
    return undefined;
  }
  return new Int32Array(buffer, 0, 2);
}

/**
 * Sleeps in `Atomics.wait` until the bell is rung past `seen` or `timeoutMs` passes; true if it was rung.
 * No spin first: on this shared 2-core machine a spinning worker took the core the main thread needed to
 * answer (start 2.2× slower with a 0.2 ms spin at load 13, A/B in one process).
 */
export function waitRung(bell: Int32Array, seen: number, timeoutMs: number): boolean {
  return Atomics.wait(bell, DOORBELL_RUNG, seen, Math.max(0, timeoutMs)) !== "timed-out";
}
