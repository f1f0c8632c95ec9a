/**
 * Messages between a driver (page or server) and a sandbox worker. A union told apart by `type`; every
 * message of a run carries that run's nonce so stale messages from a replaced worker are ignored.
 */
import type { CallRequest, HostCallAnswer, LogLine, RunInput, RunOutcome } from "./engine";

export type ToWorker =
  | { type: "run"; nonce: string; input: RunInput }
  | { type: "answer"; nonce: string; index: number; answer: HostCallAnswer }
  | { type: "cancel"; nonce: string };

export type FromWorker =
  /** The engine loaded (or, with `error`, could not load: every run then fails Unavailable at once). */
  | { type: "ready"; error?: string }
  | { type: "call"; nonce: string; call: CallRequest }
  | { type: "log"; nonce: string; line: LogLine }
  /** The program is running guest code (true) or only waiting for App calls (false): drives the watchdog. */
  | { type: "busy"; nonce: string; busy: boolean }
  | { type: "done"; nonce: string; outcome: RunOutcome };

export function isFromWorker(value: unknown): value is FromWorker {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { type?: unknown }).type === "string" &&
    ["ready", "call", "log", "busy", "done"].includes((value as { type: string }).type)
  );
}

export function isToWorker(value: unknown): value is ToWorker {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { type?: unknown }).type === "string" &&
    ["run", "answer", "cancel"].includes((value as { type: string }).type)
  );
}
