/**
 * The journal's "sent, but the outcome is unknown" branch. A call whose App operation is Unknown is never
 * sent again on its own: it waits for a person (Mark as done or Send again, reconcile.ts), except that a
 * tool a trusted connection marks `idempotentHint: true` is retried once, automatically. Each resend is
 * claimed in one statement, so two hosts replaying at once send it at most once, and the row says why.
 */
import "server-only";
import type { UnknownState } from "@/contracts/reconcile";
import type { ToolEntry } from "../../apps/registry";
import type { ServiceContext } from "../context";
import type { CallRow, RunRow } from "./rows";

/** A tool the server may retry once after an Unknown outcome: idempotent, on a connection that is trusted. */
export const mayRetryUnknown = (entry: ToolEntry) =>
  entry.connectionUntrusted === false && entry.annotations?.idempotentHint === true;

/**
 * What the replay does with a call that was sent without a recorded outcome: `send` (claimed: a person
 * said Send again, or the one automatic retry), `pause` (waits for a person), `stop` (still in flight,
 * or finished but unrecorded: nothing is sent).
 */
export async function unknownStep(
  ctx: ServiceContext,
  run: RunRow,
  existing: CallRow & { unknown_state?: UnknownState | null },
  entry: ToolEntry | undefined,
  /** The status of the call's App operation, as the journal read it. */
  opStatus: string | undefined,
): Promise<"send" | "pause" | "stop"> {
  const { db } = ctx.platform;
  // Still in flight, or finished but unrecorded, or the tool changed since: nothing is sent.
  if (opStatus !== "Unknown" || !entry) return "stop";
  const now = Date.now();
  const claim = async (from: "send" | null, to: UnknownState) => {
    const rows = await db.query(
      `update code_run_calls set unknown_state = $1, unknown_at = $2
       where run_id = $3 and idx = $4 and ${from === null ? "unknown_state is null" : "unknown_state = 'send'"} returning idx`,
      [to, now, run.id, existing.idx],
    );
    return rows.length > 0;
  };
  const state = existing.unknown_state ?? null;
  if (state === "send" && (await claim("send", "sent"))) return "send";
  if (state === null && mayRetryUnknown(entry) && (await claim(null, "auto"))) return "send";
  await db.query(
    `update code_run_calls set unknown_state = 'pending', unknown_by = null, unknown_at = $1
     where run_id = $2 and idx = $3 and (unknown_state is null or unknown_state in ('sent', 'auto'))`,
    [now, run.id, existing.idx],
  );
  await db.query(
    "update code_runs set status = 'Waiting', updated_at = $1 where id = $2 and status in ('Running', 'Waiting')",
    [now, run.id],
  );
  ctx.platform.events.emit("run", { runId: run.id, chatId: run.chat_id });
  return "pause";
}
