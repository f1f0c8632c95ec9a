/**
 * The contract between a sandbox host (browser Web Worker, Node worker thread) and whoever drives it.
 * Runtime-neutral: imports nothing, so the browser worker, the Node worker and the server all share it.
 * Values cross this boundary as JSON strings produced inside the guest, never as guest objects.
 */

/** Why a program did not finish normally (SPEC.md "Failure reasons"). */
export const FAILURE_REASONS = [
  "Error",
  "Timeout",
  "Memory",
  "OutputTooLarge",
  "ReplayMismatch",
  "Cancelled",
  "Unavailable",
  "Interrupted",
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** The `name` of the Error a failed App call rejects with inside the program. */
export const APP_ERROR_NAMES = ["AppCallDenied", "AppCallFailed", "AppInputRequired", "VaultDenied"] as const;
export type AppErrorName = (typeof APP_ERROR_NAMES)[number];

/** Limits from platform settings; identical on every host. */
export interface EngineLimits {
  /** The program's own running time; time spent waiting for App calls does not count. Default 10000. */
  timeoutMs: number;
  /** Hard cap on the sandbox's memory. Default 64. */
  memoryMb: number;
  /** Cap on the JSON size of the return value and on the log text kept. Default 65536. */
  outputBytes: number;
  /** Calls in flight at once; the rest queue in issue order. Default 16. */
  maxPendingCalls: number;
}

/** The outcome of one App call as the program sees it. */
export type CallOutcome =
  | { type: "ok"; resultJson: string }
  | { type: "error"; name: AppErrorName; message: string; details: Record<string, unknown> };

/**
 * What the host answers to a call. Besides an outcome it can pause this call (a decision is needed: its
 * promise stays pending while the program runs on) or stop the run (replay mismatch found by the server,
 * cancel, storage failure).
 */
export type HostCallAnswer =
  | CallOutcome
  | { type: "pause" }
  | { type: "stop"; reason: "ReplayMismatch" | "Cancelled" | "Unavailable"; message: string };

/** One call the program made in an earlier attempt, with its stored outcome. */
export interface RecordedCall {
  index: number;
  binding: string;
  /** Canonical JSON of the arguments (object keys sorted). */
  argsJson: string;
  outcome: CallOutcome;
}

/** Recorded outcomes and the order in which the calls originally completed. */
export interface ReplayLog {
  calls: RecordedCall[];
  /** Call indexes in the order their outcomes were originally delivered. */
  completionOrder: number[];
}

export type LogLevel = "log" | "info" | "warn" | "error";
export interface LogLine {
  level: LogLevel;
  text: string;
}
export type OutputItem = { type: "text"; text: string } | { type: "json" /** Always present. */; value?: unknown };

/** Everything a host needs to run one attempt of a program. */
export interface RunInput {
  /** JavaScript: the body of an async function (TypeScript is transpiled before it gets here). */
  code: string;
  /** The run's fixed time (epoch ms) for Date.now() and new Date(). */
  time: number;
  /** Seed of Math.random(). */
  seed: number;
  limits: EngineLimits;
  /** The exact binding names this run may call, e.g. "work_calendar.list_events". */
  bindings: string[];
  /** Vault entry names visible as references (`vault.github.token`). */
  vaultNames: string[];
  replay?: ReplayLog;
}

export type RunOutcome =
  | { status: "completed"; valueJson: string; logs: LogLine[]; output: OutputItem[] }
  | { status: "failed"; reason: FailureReason; message: string; logs: LogLine[]; output: OutputItem[] }
  /** Nothing else can run: every pending call waits for a decision; `index` is the first of them. */
  | { status: "waiting"; index: number; logs: LogLine[]; output: OutputItem[] };

/** A call the program issued, as the host sees it. */
export interface CallRequest {
  index: number;
  binding: string;
  /** Canonical JSON of the arguments. */
  argsJson: string;
}
