/**
 * The busy-time meter of contracts/worker-protocol.ts (`BusyMeter`): the worker writes how long guest code
 * has run into shared memory and the supervisor's watchdog reads it, so a run exchanges no busy/idle
 * messages. Used only where SharedArrayBuffer exists (Node worker threads; cross-origin isolated pages);
 * elsewhere the worker keeps sending "busy" messages. Free of the engine, so the supervisor's bundle stays small.
 */
import type { BusyMeter } from "../contracts/worker-protocol";

const TOTAL_US = 0;
const SINCE_MS = 1;
const CANCEL = 2;
const WAITED_US = 3;
const METER_BYTES = 16;

/** Milliseconds on a clock both sides of a worker boundary share (absolute, sub-millisecond). */
export function meterClock(): number {
  if (
    typeof performance !== "undefined" &&
    typeof performance.now === "function" &&
    typeof performance.timeOrigin === "number"
  ) {
    return performance.timeOrigin + performance.now();
  }
  return Date.now();
}

/** A new meter for one run, or undefined where memory cannot be shared. */
export function createMeter(): { meter: BusyMeter; view: Int32Array } | undefined {
  if (typeof SharedArrayBuffer !== "function" || typeof Atomics !== "object") return undefined;
  try {
    const buffer = new SharedArrayBuffer(METER_BYTES);
    const view = new Int32Array(buffer);
    view[SINCE_MS] = -1;
    return { meter: { buffer, base: meterClock() }, view };
  } catch {
    return undefined;
  }
}

/**
 * Guest time so far on `view`, in ms, the slice in progress included, less the time the worker last
 * reported its thread waited for a core while the guest was busy (see `meterWaited`).
 */
export function meterBusyMs(view: Int32Array, base: number): number {
  const total = Atomics.load(view, TOTAL_US) / 1000;
  const since = Atomics.load(view, SINCE_MS);
  const busy = since < 0 ? total : total + Math.max(0, meterClock() - base - since);
  return busy - Atomics.load(view, WAITED_US) / 1000;
}

/** The driver cancels the run: the worker's interrupt handler sees it even while guest code runs. */
export function meterCancel(view: Int32Array): void {
  Atomics.store(view, CANCEL, 1);
}

/**
 * The worker's report that `ms` of the guest's busy (wall) time so far was its thread waiting for a core,
 * not running: the watchdog does not count it. Undefined if `meter` is not a usable one.
 */
export function meterWaited(meter: unknown): ((ms: number) => void) | undefined {
  const view = meterView(meter);
  if (!view) return undefined;
  return (ms) => void Atomics.store(view, WAITED_US, Math.min(2 ** 31 - 1, Math.max(0, Math.round(ms * 1000))));
}

/**
 * The worker's side of the cancel flag: a check that is true once the driver cancelled the run, or
 * undefined if `meter` is not a usable one (a meter without the flag's room included).
 */
export function meterCancelled(meter: unknown): (() => boolean) | undefined {
  const view = meterView(meter);
  if (!view) return undefined;
  return () => Atomics.load(view, CANCEL) !== 0;
}

/**
 * The worker's side: an `onBusy` that records slices into the meter, or undefined if `meter` is not a
 * usable one (it arrived over postMessage: check it). Nested `true` calls keep the first slice start.
 */
export function meterWriter(meter: unknown): ((busy: boolean) => void) | undefined {
  const view = meterView(meter);
  if (!view) return undefined;
  const base = (meter as BusyMeter).base;
  let sliceStart: number | undefined;
  return (busy) => {
    if (busy) {
      if (sliceStart !== undefined) return;
      sliceStart = meterClock();
      Atomics.store(view, SINCE_MS, Math.max(0, Math.floor(sliceStart - base)));
    } else if (sliceStart !== undefined) {
      const us = Math.round((meterClock() - sliceStart) * 1000);
      sliceStart = undefined;
      Atomics.store(view, SINCE_MS, -1);
      Atomics.add(view, TOTAL_US, us);
    }
  };
}

/**
 * The worker's view of a meter that arrived over postMessage, or undefined if it is not a usable one (no
 * SharedArrayBuffer of the meter's size, or no finite base).
 */
function meterView(meter: unknown): Int32Array | undefined {
  if (typeof SharedArrayBuffer !== "function" || typeof meter !== "object" || meter === null) return undefined;
  const { buffer, base } = meter as Partial<BusyMeter>;
  if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < METER_BYTES) return undefined;
  if (typeof base !== "number" || !Number.isFinite(base)) return undefined;
  return new Int32Array(buffer, 0, METER_BYTES / 4);
}
