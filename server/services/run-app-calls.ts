/**
 * The App calls a run has in flight. Each call of a run carries an abort signal from here; when the run
 * ends (cancelled, failed, timed out, or done while calls were still out) every one of them is aborted,
 * which cancels the request at the App (the SDK sends `notifications/cancelled`; over Streamable HTTP the
 * request's stream is closed too), so nothing keeps running there after the run.
 */
import "server-only";
import type { Platform } from "../platform";

export function trackRunCall(platform: Platform, runId: string | null): { signal?: AbortSignal; done(): void } {
  if (runId === null) return { done: () => undefined };
  const controller = new AbortController();
  const calls = platform.runAppCalls.get(runId) ?? new Set<AbortController>();
  platform.runAppCalls.set(runId, calls);
  calls.add(controller);
  return {
    signal: controller.signal,
    done() {
      calls.delete(controller);
      if (calls.size === 0 && platform.runAppCalls.get(runId) === calls) platform.runAppCalls.delete(runId);
    },
  };
}

/** Cancels every App call the run still has in flight; returns how many. */
export function cancelRunCalls(platform: Platform, runId: string): number {
  const calls = platform.runAppCalls.get(runId);
  if (!calls) return 0;
  platform.runAppCalls.delete(runId);
  for (const c of calls) c.abort();
  return calls.size;
}
