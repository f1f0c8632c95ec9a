/**
 * A program's call parked on a person's input (app-input.ts), settled from outside the run: its outcome is
 * recorded at the operation's run and index, and the run is re-run (`input-answered` → the durable
 * `resume-run` job, boot.ts). Also: a parked question past its deadline, or an older server's question
 * that this process no longer holds (a restart loses the App's open request), settles as AppInputRequired.
 */
import "server-only";
import type { CallOutcome } from "@/contracts/engine";
import type { Platform } from "../../platform";
import { inputOutcome } from "../app-calls";
import type { ServiceContext } from "../context";
import { recordOutcome } from "./journal";

/** Records `outcome` for the call that App operation `operationId` belongs to, and re-runs its run. */
export async function settleParkedCall(ctx: ServiceContext, operationId: string, outcome: CallOutcome): Promise<void> {
  const op = (
    await ctx.platform.db.query<{ run_id: string | null; call_index: number | null }>(
      "select run_id, call_index from app_operations where id = $1",
      [operationId],
    )
  )[0];
  if (!op?.run_id || op.call_index === null) return;
  // Only a call still without an outcome takes this one (a second settle of the same call changes nothing).
  const open = await ctx.platform.db.query(
    "select 1 from code_run_calls where run_id = $1 and idx = $2 and outcome_enc is null and operation_id = $3",
    [op.run_id, op.call_index, operationId],
  );
  if (open.length === 0) return;
  const rejection = outcome.type === "error" ? { name: outcome.name, message: outcome.message } : null;
  await recordOutcome(ctx, op.run_id, op.call_index, outcome, rejection);
  ctx.platform.events.emit("input-answered", {
    runId: op.run_id,
    operationId,
    key: `resume-run:input-settled:${operationId}`,
  });
}

/**
 * Ends a parked question without an answer (declined, cancelled, expired, or lost with a restart): the
 * operation fails (only if it still waits: one statement decides) and the program's call gets AppInputRequired.
 */
export async function endParkedInput(
  platform: Platform,
  operationId: string,
  action: "decline" | "cancel" | "expired",
): Promise<boolean> {
  const rows = await platform.db.query<{ input_enc: string | null }>(
    `update app_operations set status = 'Failed', error_reason = $2, finished_at = $3
     where id = $1 and status = 'InputRequired' returning input_enc`,
    [operationId, action === "expired" ? "input_expired" : `input_${action}`, Date.now()],
  );
  if (!rows[0]) return false;
  const question = rows[0].input_enc
    ? (JSON.parse(platform.open(`app_operations:${operationId}:input`, rows[0].input_enc)) as {
        binding: string;
        message: string;
      })
    : { binding: "The App", message: "" };
  const outcome = inputOutcome(question.binding, operationId, question.message, action);
  await platform.db.query("update app_operations set result_enc = $1 where id = $2", [
    platform.seal(
      `app_operations:${operationId}:result`,
      JSON.stringify({ error: { name: outcome.name, message: outcome.message, details: outcome.details } }),
    ),
    operationId,
  ]);
  await settleParkedCall({ platform, principal: null }, operationId, outcome);
  platform.events.emit("run", { runId: null });
  return true;
}

/** Parked questions past their deadline (the sweep calls this): each one ends as expired. */
export async function expireParkedInputs(platform: Platform, now = Date.now()): Promise<string[]> {
  const due = await platform.db.query<{ id: string }>(
    "select id from app_operations where status = 'InputRequired' and input_expires_at is not null and input_expires_at < $1",
    [now],
  );
  const expired: string[] = [];
  for (const { id } of due) if (await endParkedInput(platform, id, "expired")) expired.push(id);
  return expired;
}
