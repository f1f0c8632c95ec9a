/** The read model: a run's record as callers see it (code, calls with their App operations, result). */
import "server-only";
import type { AppOperationView, CodeRunCallView, CodeRunRecord, CodeRunResult } from "@/contracts/code-run";
import type { CallOutcome } from "@/contracts/engine";
import type { Platform } from "../../platform";
import { requirePermission } from "../auth";
import { readableChat } from "../chats";
import type { ServiceContext } from "../context";
import { runDecisions } from "../decisions";
import { AppError } from "../errors";
import { type CallRow, loadRun, type OperationRow, open, type RunRow, type StoredTask } from "./rows";

/** The record, if the caller has apps.use and may read the run's chat now. */
export async function getRun(ctx: ServiceContext, runId: string): Promise<CodeRunRecord> {
  const p = requirePermission(ctx.principal, "apps.use");
  const run = (await ctx.platform.db.query<RunRow>("select * from code_runs where id = $1", [runId]))[0];
  if (!run) throw new AppError("NOT_FOUND", "No such code run.");
  await readableChat(ctx.platform.db, p, run.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such code run.");
  });
  return toRecord(ctx, run);
}

/**
 * The record for a host that just passed `runForHost` for this run (its chat was checked there): from
 * `run`, its row as a statement just returned it, or read by its id.
 */
export async function hostedRunRecord(ctx: ServiceContext, run: RunRow | string): Promise<CodeRunRecord> {
  return toRecord(ctx, typeof run === "string" ? await loadRun(ctx, run) : run);
}

/** The record for the server's own use (no caller): posting late results, recovery. */
export async function readRecordInternal(platform: Platform, runId: string): Promise<CodeRunRecord | null> {
  const run = (await platform.db.query<RunRow>("select * from code_runs where id = $1", [runId]))[0];
  return run ? toRecord({ platform, principal: null }, run) : null;
}

export async function listRuns(ctx: ServiceContext, chatId: string): Promise<CodeRunRecord[]> {
  const p = requirePermission(ctx.principal, "apps.use");
  await readableChat(ctx.platform.db, p, chatId);
  const rows = await ctx.platform.db.query<RunRow>(
    "select * from code_runs where chat_id = $1 order by created_at, id",
    [chatId],
  );
  return Promise.all(rows.map((r) => toRecord(ctx, r)));
}

async function toRecord(ctx: ServiceContext, run: RunRow): Promise<CodeRunRecord> {
  const { db } = ctx.platform;
  // Each call with its App operation in one statement; the decisions only when a call was decided.
  const calls = await db.query<CallRow & OperationColumns>(
    `select c.*, o.id as op_id, o.execution_id as op_execution_id, o.status as op_status, o.result_enc as op_result_enc,
       o.progress_enc as op_progress_enc, o.task_enc as op_task_enc, o.started_at as op_started_at,
       o.finished_at as op_finished_at
     from code_run_calls c left join app_operations o on o.id = c.operation_id and o.run_id = c.run_id
     where c.run_id = $1 order by c.idx`,
    [run.id],
  );
  const decided = calls.some((c) => c.decision_id)
    ? await runDecisions(db, run.id)
    : new Map<string, { by: { id: string; name: string }; at: number }>();
  return {
    id: run.id,
    executionId: run.execution_id,
    chat: run.chat_id,
    session: run.chat_id,
    turn: run.turn_id,
    callId: run.call_id,
    status: run.status,
    language: run.language,
    code: open<string>(ctx, "code_runs", run.id, "code", run.code_enc),
    reason: open<string>(ctx, "code_runs", run.id, "reason", run.reason_enc),
    calls: calls.map((c) => {
      const op = operationOf(c);
      return {
        index: c.idx,
        binding: c.binding,
        source: JSON.parse(c.source) as CodeRunCallView["source"],
        arguments: JSON.parse(open<string>(ctx, "code_run_calls", `${run.id}:${c.idx}`, "args", c.args_enc)) as unknown,
        app: op
          ? {
              id: op.id,
              executionId: op.execution_id,
              status: op.status,
              result: operationResult(ctx, run.id, c, op),
              progress: op.progress_enc
                ? open<NonNullable<AppOperationView["progress"]>>(
                    ctx,
                    "app_operations",
                    op.id,
                    "progress",
                    op.progress_enc,
                  )
                : null,
              task: op.task_enc ? taskView(open<StoredTask>(ctx, "app_operations", op.id, "task", op.task_enc)) : null,
              startedAt: Number(op.started_at),
              finishedAt: op.finished_at === null ? null : Number(op.finished_at),
            }
          : null,
        rejection: c.rejection ? (JSON.parse(c.rejection) as { name: string; message: string }) : null,
        decision:
          (c.decision_id && decided.get(c.decision_id)) ||
          (c.grant_id ? { by: { grant: c.grant_id }, at: Number(c.created_at) } : null),
        grantId: c.grant_id ?? null,
        unknown: c.unknown_state
          ? {
              state: c.unknown_state,
              by: c.unknown_by ?? null,
              at: c.unknown_at === null || c.unknown_at === undefined ? null : Number(c.unknown_at),
            }
          : null,
      };
    }),
    result: run.result_enc ? open<CodeRunResult>(ctx, "code_runs", run.id, "result", run.result_enc) : null,
    createdAt: Number(run.created_at),
    updatedAt: Number(run.updated_at),
  };
}

/**
 * What the call's App operation returned: its own sealed result, or (a program's call stores its result
 * once, with the call's outcome: app-calls.ts) the result read from that outcome, as the operation
 * would have stored it (the App's result, or `{ error }` for a failure).
 */
function operationResult(ctx: ServiceContext, runId: string, call: CallRow, op: OperationRow): unknown {
  if (op.result_enc) return open<unknown>(ctx, "app_operations", op.id, "result", op.result_enc);
  if (!call.outcome_enc || (op.status !== "Completed" && op.status !== "Failed")) return null;
  const outcome = open<CallOutcome>(ctx, "code_run_calls", `${runId}:${call.idx}`, "outcome", call.outcome_enc);
  if (outcome.type === "ok") return JSON.parse(outcome.resultJson) as unknown;
  return { error: { name: outcome.name, message: outcome.message, details: outcome.details } };
}

/** The App operation's columns as the record's statement names them (`op_` + the column). */
interface OperationColumns {
  op_id: string | null;
  op_execution_id: string;
  op_status: OperationRow["status"];
  op_result_enc: string | null;
  op_progress_enc: string | null;
  op_task_enc: string | null;
  op_started_at: string | number;
  op_finished_at: string | number | null;
}

const operationOf = (c: OperationColumns): OperationRow | undefined =>
  c.op_id === null
    ? undefined
    : {
        id: c.op_id,
        execution_id: c.op_execution_id,
        status: c.op_status,
        result_enc: c.op_result_enc,
        progress_enc: c.op_progress_enc,
        task_enc: c.op_task_enc,
        started_at: c.op_started_at,
        finished_at: c.op_finished_at,
      };

const taskView = (t: StoredTask): NonNullable<AppOperationView["task"]> => ({
  id: t.taskId,
  status: t.status,
  statusMessage: t.statusMessage,
});
