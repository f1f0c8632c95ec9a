/**
 * Calls of a run that are being recorded on this instance: from the moment the host hands a call over
 * until it is sent to its App, asks a person, or has its answer. A program can return while a call it did
 * not await is still there (its record written, its decision not yet asked), and the attempt's end must
 * not overtake it: the end withdraws the run's pending decisions, so a decision asked after it would stay
 * pending on an ended run. `finishRun` waits for these first (a call already out at its App is not
 * waited for: the end cancels it).
 */
import "server-only";
import type { Platform } from "../../platform";

/** A call of `runId` is being recorded; the returned function (idempotent) says it no longer is. */
export function beginRecording(platform: Platform, runId: string): () => void {
  const runs = platform.recordingCalls;
  const state = runs.get(runId) ?? { count: 0, idle: [] };
  runs.set(runId, state);
  state.count += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    state.count -= 1;
    if (state.count > 0) return;
    runs.delete(runId);
    for (const wake of state.idle.splice(0)) wake();
  };
}

/** Resolves once no call of `runId` is being recorded here (at once when none is), or after `maxMs`. */
export function callsRecorded(platform: Platform, runId: string, maxMs = 10_000): Promise<void> {
  const state = platform.recordingCalls.get(runId);
  if (!state) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, maxMs);
    timer.unref();
    state.idle.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
