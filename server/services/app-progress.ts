/**
 * Progress of an App call (`notifications/progress`): each report is stored, sealed, on its App
 * operation (the last one stays in the record) and announced as a run change, so the run card shows it
 * live. Writes go one after another in arrival order; `flush` waits for the last before the operation
 * gets its result.
 */
import "server-only";
import type { AppProgress } from "../apps/registry";
import type { Platform } from "../platform";

const MAX_MESSAGE = 300;

export function progressRecorder(
  platform: Platform,
  opId: string,
  where: { runId: string | null; chatId: string | null },
  redact: (text: string) => string,
): { onProgress(progress: AppProgress): void; flush(): Promise<void> } {
  let chain: Promise<unknown> = Promise.resolve();
  return {
    onProgress(progress) {
      if (typeof progress.progress !== "number" || !Number.isFinite(progress.progress)) return;
      const stored = {
        progress: progress.progress,
        ...(typeof progress.total === "number" && Number.isFinite(progress.total) ? { total: progress.total } : {}),
        ...(typeof progress.message === "string" ? { message: redact(progress.message.slice(0, MAX_MESSAGE)) } : {}),
      };
      chain = chain
        .then(() =>
          platform.db.query("update app_operations set progress_enc = $1 where id = $2 and status = 'Running'", [
            platform.seal(`app_operations:${opId}:progress`, JSON.stringify(stored)),
            opId,
          ]),
        )
        .then(() => platform.events.emit("run", where))
        .catch(() => undefined);
    },
    flush: () => chain.then(() => undefined),
  };
}
