/**
 * The App calls a run has in flight. Each call of a run registers how to cancel it here; when the run
 * ends (cancelled, failed, timed out, or done while calls were still out) every one of them is cancelled,
 * which cancels the request at the App (the SDK sends `notifications/cancelled`; over Streamable HTTP the
 * request's stream is closed too), so nothing keeps running there after the run. A call registers a plain
 * function (the connection's own abort, see AppConnection.call `onCancel`), not an AbortController of its
 * own: a signal and its listener per call were a measurable share of a nested call's main-thread CPU.
 */
import "server-only";
import type { Platform } from "../platform";

/** Registers `cancel` for the run's end; the returned function takes it back (the call is over). */
export type CancelHook = (cancel: () => void) => () => void;

export function trackRunCall(platform: Platform, runId: string | null): CancelHook | undefined {
  if (runId === null) return undefined;
  return (cancel) => {
    const calls = platform.runAppCalls.get(runId) ?? new Set<() => void>();
    platform.runAppCalls.set(runId, calls);
    calls.add(cancel);
    return () => {
      calls.delete(cancel);
      if (calls.size === 0 && platform.runAppCalls.get(runId) === calls) platform.runAppCalls.delete(runId);
    };
  };
}

/** Cancels every App call the run still has in flight; returns how many. */
export function cancelRunCalls(platform: Platform, runId: string): number {
  const calls = platform.runAppCalls.get(runId);
  if (!calls) return 0;
  platform.runAppCalls.delete(runId);
  for (const cancel of calls) cancel();
  return calls.size;
}
