/**
 * Messages between a driver (page or server) and a sandbox worker. A union told apart by `type`; every
 * message of a run carries that run's nonce so stale messages from a replaced worker are ignored.
 */
import type { CallRequest, HostCallAnswer, LogLine, RunInput, RunOutcome } from "./engine";

/**
 * Busy time shared through memory instead of "busy" messages (when the driver has SharedArrayBuffer): an
 * Int32Array over `buffer` with [0] = guest time of finished slices in µs, [1] = start of the slice in
 * progress in ms since `base` (a `performance.timeOrigin + performance.now()` reading), or -1 when idle.
 * The worker writes [1] = -1 before adding to [0], so a reader that loads [0] then [1] never counts a
 * slice twice. With a meter the worker sends no "busy" messages for that run. [2] is the cancel flag: the
 * driver sets it to 1 (beside its "cancel" message), and the worker's interrupt handler, which runs while
 * guest code does, stops the run at once; the message alone waits until the guest yields. [3] is how much of
 * the busy time, in µs, the worker found its thread waiting for a core (its CPU clock behind the wall
 * clock): the watchdog does not count it, as the run's own time limit does not.
 */
export interface BusyMeter {
  buffer: SharedArrayBuffer;
  base: number;
}

/** The driver's answer to call `index` of a run. */
export interface CallAnswer {
  index: number;
  answer: HostCallAnswer;
}

export type ToWorker =
  | { type: "run"; nonce: string; input: RunInput; meter?: BusyMeter }
  /** Answers to calls of the run, in the order they were ready (all that were ready at once go in one message). */
  | { type: "answers"; nonce: string; answers: CallAnswer[] }
  | { type: "cancel"; nonce: string };

export type FromWorker =
  /** The engine loaded (or, with `error`, could not load: every run then fails Unavailable at once). */
  | { type: "ready"; error?: string }
  /** Calls the program issued; all the calls of one guest slice go in one message. */
  | { type: "calls"; nonce: string; calls: CallRequest[] }
  /** Log lines as they were kept, in order; the lines kept while one message was on its way go in the next. */
  | { type: "logs"; nonce: string; lines: LogLine[] }
  /** The program is running guest code (true) or only waiting for App calls (false): drives the watchdog. */
  | { type: "busy"; nonce: string; busy: boolean }
  | { type: "done"; nonce: string; outcome: RunOutcome };

export function isFromWorker(value: unknown): value is FromWorker {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { type?: unknown }).type === "string" &&
    ["ready", "calls", "logs", "busy", "done"].includes((value as { type: string }).type)
  );
}

export function isToWorker(value: unknown): value is ToWorker {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { type?: unknown }).type === "string" &&
    ["run", "answers", "cancel"].includes((value as { type: string }).type)
  );
}
