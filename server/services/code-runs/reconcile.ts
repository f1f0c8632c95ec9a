/**
 * A person reconciles a call whose outcome is Unknown ("this may or may not have happened"): Mark as
 * done records the result they type (or none) without sending anything; Send again lets the next replay
 * send it once more, recorded as theirs. Either way the run then continues through replay. The chat's
 * owner or an admin decides; a reader is refused, a stranger finds no such run.
 */
import "server-only";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { CallOutcome } from "@/contracts/engine";
import type { ReconcileInput } from "@/contracts/reconcile";
import { requirePermission } from "../auth";
import { ownedChat } from "../chats";
import type { ServiceContext } from "../context";
import { AppError, isAppError } from "../errors";
import { recordOutcome } from "./journal";
import { getRun } from "./records";
import { type CallRow, loadRun } from "./rows";
import { resumeRun } from "./runs";

/** What the program gets for a call a person marked done: their text (JSON as structured content too). */
function markedDoneOutcome(text: string | undefined): CallOutcome {
  const result: Record<string, unknown> = { content: text ? [{ type: "text", text }] : [], markedDone: true };
  if (text) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) result.structuredContent = parsed;
    } catch {
      // Plain text stays text.
    }
  }
  return { type: "ok", resultJson: JSON.stringify(result) };
}

export async function reconcileCall(
  ctx: ServiceContext,
  runId: string,
  index: number,
  input: ReconcileInput,
): Promise<CodeRunRecord> {
  const p = requirePermission(ctx.principal, "apps.use");
  const run = await loadRun(ctx, runId);
  await ownedChat(ctx.platform.db, p, run.chat_id).catch((error: unknown) => {
    throw isAppError(error) && error.code === "FORBIDDEN" ? error : new AppError("NOT_FOUND", "No such code run.");
  });
  const { db } = ctx.platform;
  const next = input.action === "done" ? "done" : "send";
  const claimed = await db.query<CallRow>(
    `update code_run_calls set unknown_state = $1, unknown_by = $2, unknown_at = $3
     where run_id = $4 and idx = $5 and unknown_state = 'pending' and outcome_enc is null returning *`,
    [next, p.userId, Date.now(), runId, index],
  );
  if (!claimed[0]) {
    const row = (
      await db.query<CallRow>("select * from code_run_calls where run_id = $1 and idx = $2", [runId, index])
    )[0];
    if (!row) throw new AppError("NOT_FOUND", `Run ${runId} has no call ${index}.`);
    throw new AppError(
      "CONFLICT",
      `Call ${index} does not wait for a person (${row.unknown_state ?? "not Unknown"}).`,
      {
        state: row.unknown_state ?? null,
      },
    );
  }
  if (input.action === "done") {
    const result = input.result?.trim();
    await recordOutcome(ctx, runId, index, markedDoneOutcome(result || undefined), null);
  }
  ctx.platform.events.emit("run", { runId, chatId: run.chat_id });
  ctx.platform.track(resumeRun(ctx.platform, runId));
  return getRun(ctx, runId);
}
