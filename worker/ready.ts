/**
 * The "ready" message as sandbox workers send it, shared by the worker host and the supervisor (this file
 * stays free of the engine so the supervisor's bundle does not pull QuickJS in).
 */
import type { FromWorker } from "../contracts/worker-protocol";

/**
 * "ready" with `error` set: the engine could not load and every run on this worker fails `Unavailable`,
 * so the driver need not wait out its ready timeout (worker-host.ts answers every "run" so once loading
 * failed).
 */
export type WorkerReady = Extract<FromWorker, { type: "ready" }>;
export type WorkerMessage = FromWorker;

/** The load error a "ready" message reports, or undefined when the worker is usable (or not "ready"). */
export function readyError(message: { type: string }): string | undefined {
  if (message.type !== "ready") return undefined;
  const error = (message as { error?: unknown }).error;
  if (error === undefined) return undefined;
  return typeof error === "string" && error ? error : "the sandbox engine could not be loaded";
}
