/**
 * How an attempt ends, as its host reports it (`finishRun`) or as the server decides (`failRun`): the
 * report is bounded by the run's own limits before anything is stored, the completion order the program
 * saw replaces the server's, calls still waiting for a decision are withdrawn, calls still out at the App
 * are cancelled, and `run-settled` / `run-waiting` tell the subscribers (boot.ts) what comes next.
 */
import "server-only";
import {
  type CodeRunRecord,
  type CodeRunResult,
  type CodeRunStatus,
  LIVE_RUN_STATUSES_SQL,
} from "@/contracts/code-run";
import type { EngineLimits, FailureReason, RunOutcome } from "@/contracts/engine";
import { utf8Length } from "@/worker/canonical-json";
import { logOutcome } from "../../log";
import type { Platform } from "../../platform";
import type { ServiceContext } from "../context";
import { withdrawDecisions } from "../decisions";
import { AppError } from "../errors";
import { cancelRunCalls } from "../run-app-calls";
import { callsRecorded } from "./recording";
import { hostedRunRecord } from "./records";
import { open, type RunRow, runForCall, runForHost, seal } from "./rows";

const SAFE_MESSAGES: Record<FailureReason, string> = {
  Error: "The program threw an error it did not catch.",
  Timeout: "The program used all of its time.",
  Memory: "The program used all of its memory.",
  OutputTooLarge: "The program returned more data than outputBytes allows.",
  ReplayMismatch: "The program made a different call than in its earlier run.",
  Cancelled: "The program was stopped.",
  Unavailable: "OpenBot could not run or store the program, or Code Mode is off.",
  Interrupted: "The program's caller or a stored step is gone.",
};

const WITHDRAWN_MESSAGE = {
  Completed: "The program returned before this call was decided; it was not sent.",
  Failed: "The program failed before this call was decided; it was not sent.",
  Cancelled: "The program was stopped before this call was decided; it was not sent.",
};

/** Stores the end of an attempt as its host reports it. */
export async function finishRun(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  outcome: RunOutcome & { completionOrder?: number[] },
): Promise<CodeRunRecord> {
  // A call the program did not await may still be on its way into the record (recording.ts).
  await callsRecorded(ctx.platform, runId);
  if (outcome.status === "completed") {
    // The check this attempt's calls made (rows.ts runForCall: remembered a few seconds) stands for its
    // end too: the run's fixed fields come from there, and the completing statement itself requires the
    // run still Running at this attempt. Anything else (it ended meanwhile, another attempt took it, the
    // value is too large) takes the full way below, which reads the run again.
    const { run } = await runForCall(ctx, runId, attempt);
    checkOutcomeBounds(run, outcome);
    if (valueFits(run, outcome)) {
      const record = await completeRun(ctx, run, attempt, outcome);
      if (record) return record;
    }
  }
  return finishChecked(ctx, runId, attempt, outcome);
}

/** The value a completed attempt returns is within the run's outputBytes. */
const valueFits = (run: RunRow, outcome: { valueJson?: string }) =>
  utf8Length(outcome.valueJson ?? "") <= (JSON.parse(run.limits) as EngineLimits).outputBytes;

/** The end of an attempt after reading the run again (finishRun's full way). */
async function finishChecked(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  outcome: RunOutcome & { completionOrder?: number[] },
): Promise<CodeRunRecord> {
  const { run } = await runForHost(ctx, runId, attempt);
  checkOutcomeBounds(run, outcome);
  if (run.status === "Running" && outcome.status === "completed" && valueFits(run, outcome))
    return (await completeRun(ctx, run, attempt, outcome)) ?? hostedRunRecord(ctx, runId);
  if (outcome.completionOrder?.length) await storeCompletionOrder(ctx, runId, outcome.completionOrder);
  if (run.status !== "Running") {
    if (run.status === "Cancelled" && outcome.logs.length > 0) await keepCancelledLogs(ctx, run, outcome.logs);
    return hostedRunRecord(ctx, runId);
  }
  if (outcome.status === "completed") {
    const { outputBytes } = JSON.parse(run.limits) as EngineLimits;
    await failRun(ctx, runId, "OutputTooLarge", `The value is larger than outputBytes (${outputBytes}).`, outcome.logs);
  } else if (outcome.status === "failed") {
    await failRun(ctx, runId, outcome.reason, outcome.message, outcome.logs);
  } else {
    const waiting = await ctx.platform.db.query(
      "update code_runs set status = 'Waiting', updated_at = $1 where id = $2 and status = 'Running' returning id",
      [Date.now(), runId],
    );
    // Its decisions may all have been taken while the program still ran: subscribers re-run it then.
    if (waiting.length) ctx.platform.events.emit("run-waiting", { runId });
  }
  ctx.platform.events.emit("run", { runId });
  return hostedRunRecord(ctx, runId);
}

/**
 * One statement: the completion order the program saw is stored (refused, with nothing stored, when longer
 * than the run's calls: see storeCompletionOrder), the run completes if it is still Running at this
 * attempt, its decisions still pending are withdrawn, and whether a task of the run is still out at an
 * App is read. Undefined when the run did not complete here (finishRun's full way answers then).
 */
async function completeRun(
  ctx: ServiceContext,
  run: RunRow,
  attempt: number,
  outcome: RunOutcome & { status: "completed"; completionOrder?: number[] },
): Promise<CodeRunRecord | undefined> {
  const order = outcome.completionOrder ?? [];
  const indexes = [...new Set(order)];
  const value: unknown =
    outcome.valueJson === undefined || outcome.valueJson === "" ? null : JSON.parse(outcome.valueJson);
  const result: CodeRunResult = { _tag: "Completed", value, logs: outcome.logs, output: outcome.output };
  const [row] = await ctx.platform.db.query<
    RunRow & { call_count: number | string; withdrawn: (number | null)[] | null; open_tasks: boolean }
  >(
    `with n as (select count(*) as n from code_run_calls where run_id = $3),
     fits as (select (select n from n) >= $6 as ok),
     stored as (
       update code_run_calls c set completed_seq = o.seq
       from unnest($4::int[], $5::int[]) as o(idx, seq)
       where c.run_id = $3 and c.idx = o.idx and c.outcome_enc is not null and c.completed_seq is distinct from o.seq
         and (select ok from fits)),
     ended as (
       update code_runs set status = 'Completed', result_enc = $1, updated_at = $2
       where id = $3 and status = 'Running' and attempt = $7 and (select ok from fits) returning *),
     withdrawn as (
       update decisions set status = 'withdrawn', decided_at = $2
       where run_id = $3 and status = 'pending' and exists (select 1 from ended) returning call_index)
     select (select n from n) as call_count, ended.*,
       (select coalesce(array_agg(call_index), '{}') from withdrawn) as withdrawn,
       exists (select 1 from app_operations where run_id = $3 and status in ('Task', 'InputRequired')
         and task_enc is not null) as open_tasks
     from (select 1) as one left join ended on true`,
    [
      seal(ctx, "code_runs", run.id, "result", result),
      Date.now(),
      run.id,
      indexes,
      indexes.map((_, i) => i + 1),
      order.length,
      attempt,
    ],
  );
  const calls = Number(row?.call_count ?? 0);
  if (order.length > calls) refuse("completionOrder", `has ${order.length} entries, but the run made ${calls} calls`);
  if (!row?.id) return undefined;
  const { call_count: _count, withdrawn, open_tasks: openTasks, ...completed } = row;
  await withdrawCalls(
    ctx,
    run.id,
    (withdrawn ?? []).filter((i): i is number => i !== null),
    WITHDRAWN_MESSAGE.Completed,
  );
  cancelRunCalls(ctx.platform, run.id);
  reportLater(ctx.platform, run.id, run.turn_id, openTasks);
  ctx.platform.events.emit("run", { runId: run.id });
  return hostedRunRecord(ctx, completed as RunRow);
}

/**
 * A run ended: subscribers (the agent posts it into the chat when its turn moved on) take it from here.
 * `openTasks`: false when the ending statement saw no task of the run out at an App (none to cancel).
 */
function reportLater(platform: Platform, runId: string, turnId?: string | null, openTasks?: boolean): void {
  platform.events.emit("run-settled", {
    runId,
    ...(turnId === undefined ? {} : { turnId }),
    ...(openTasks === false ? { openTasks } : {}),
  });
}

const refuse = (field: string, message: string): never => {
  throw new AppError("BAD_REQUEST", `outcome.${field}: ${message}`, {
    fields: [{ field: `outcome.${field}`, message }],
  });
};

/** Room for the engine's "[log output truncated …]" line beyond outputBytes. */
const LOG_NOTE_BYTES = 256;

/**
 * What a host reports can be no bigger than what this run can have: no more completions than its
 * calls, logs and output within its own outputBytes (each line or item counts at least one byte, as the
 * engine counts them). A host that sends more is refused before anything is stored (the completion order's
 * bound is checked by the statement that would store it: storeCompletionOrder).
 */
function checkOutcomeBounds(run: RunRow, outcome: RunOutcome): void {
  const { outputBytes } = JSON.parse(run.limits) as EngineLimits;
  if (outcome.logs.length > outputBytes + 1)
    refuse("logs", `has ${outcome.logs.length} lines, more than outputBytes (${outputBytes}) allows`);
  let logBytes = 0;
  for (const line of outcome.logs) logBytes += Math.max(1, utf8Length(line.text));
  if (logBytes > outputBytes + LOG_NOTE_BYTES)
    refuse("logs", `hold ${logBytes} bytes, more than outputBytes (${outputBytes}) allows`);
  if (outcome.output.length > outputBytes)
    refuse("output", `has ${outcome.output.length} items, more than outputBytes (${outputBytes}) allows`);
  let outBytes = 0;
  for (const item of outcome.output) {
    outBytes += Math.max(
      1,
      utf8Length(item.type === "text" ? item.text : (JSON.stringify(item.value ?? null) ?? "null")),
    );
    if (outBytes > outputBytes) refuse("output", `holds more than outputBytes (${outputBytes}) allows`);
  }
}

/**
 * The order in which outcomes reached the program (the engine reports it) replaces the order the
 * server stored them in: answers crossing a network can arrive in another order than they were stored.
 * One statement, whatever the length (PGlite serialises every query, so one per entry stalls everyone).
 * A call already at its place is not written again (usually all of them: the server stores outcomes in
 * the order the program gets them), so no new row version, and no WAL, for an order that did not change.
 */
async function storeCompletionOrder(ctx: ServiceContext, runId: string, order: number[]): Promise<void> {
  const indexes = [...new Set(order)];
  const seqs = indexes.map((_, i) => i + 1);
  // The same statement counts the run's calls: an order longer than that stores nothing and is refused.
  const [row] = await ctx.platform.db.query<{ n: string | number }>(
    `with n as (select count(*) as n from code_run_calls where run_id = $1),
     stored as (
       update code_run_calls c set completed_seq = o.seq
       from unnest($2::int[], $3::int[]) as o(idx, seq)
       where c.run_id = $1 and c.idx = o.idx and c.outcome_enc is not null and c.completed_seq is distinct from o.seq
         and (select n from n) >= $4)
     select n from n`,
    [runId, indexes, seqs, order.length],
  );
  const calls = Number(row?.n ?? 0);
  if (order.length > calls) refuse("completionOrder", `has ${order.length} entries, but the run made ${calls} calls`);
}

/**
 * A run is Cancelled in the record the moment someone stops it (cancelRun), before its host has stopped
 * the program, so that record has no log. When the attempt that was running then reports its end, the
 * lines it logged until it stopped go into the Cancelled record: where a program got stuck is what a
 * person who stopped it wants to see. Only once, and only for the attempt the run was cancelled at.
 */
async function keepCancelledLogs(ctx: ServiceContext, run: RunRow, logs: RunOutcome["logs"]): Promise<void> {
  if (!run.result_enc) return;
  const result = open<CodeRunResult>(ctx, "code_runs", run.id, "result", run.result_enc);
  if (result._tag !== "Failed" || result.reason !== "Cancelled" || result.logs.length > 0) return;
  const kept = await ctx.platform.db.query(
    `update code_runs set result_enc = $1, updated_at = $2
     where id = $3 and status = 'Cancelled' and attempt = $4 and result_enc = $5 returning id`,
    [seal(ctx, "code_runs", run.id, "result", { ...result, logs }), Date.now(), run.id, run.attempt, run.result_enc],
  );
  if (kept.length) ctx.platform.events.emit("run", { runId: run.id });
}

/** Ends a run as Failed. The message stays in the (encrypted) record; the log gets only the error id and reason. */
export async function failRun(
  ctx: ServiceContext,
  runId: string,
  reason: FailureReason,
  message: string,
  logs: RunOutcome["logs"],
): Promise<void> {
  const errorId = logOutcome("code_run_failed", reason, { runId });
  ctx.platform.events.emit("run", { runId });
  const status: CodeRunStatus = reason === "Cancelled" ? "Cancelled" : "Failed";
  const result: CodeRunResult = { _tag: "Failed", reason, errorId, message: message || SAFE_MESSAGES[reason], logs };
  await ctx.platform.db.query(
    `update code_runs set status = $1, failure_reason = $2, error_id = $3, result_enc = $4, updated_at = $5
     where id = $6 and status in ${LIVE_RUN_STATUSES_SQL}`,
    [status, reason, errorId, seal(ctx, "code_runs", runId, "result", result), Date.now(), runId],
  );
  await withdrawWaiting(ctx, runId, status === "Cancelled" ? WITHDRAWN_MESSAGE.Cancelled : WITHDRAWN_MESSAGE.Failed);
  cancelRunCalls(ctx.platform, runId);
  reportLater(ctx.platform, runId);
}

/**
 * The run ended while calls still waited for a decision: their requests are withdrawn and each call is
 * recorded as Withdrawn (never sent).
 */
async function withdrawWaiting(ctx: ServiceContext, runId: string, message: string): Promise<void> {
  await withdrawCalls(ctx, runId, await withdrawDecisions(ctx.platform.db, runId), message);
}

/** The calls whose decisions were just withdrawn are recorded as Withdrawn (never sent). */
async function withdrawCalls(ctx: ServiceContext, runId: string, indexes: number[], message: string): Promise<void> {
  if (indexes.length === 0) return;
  await ctx.platform.db.query(
    `update code_run_calls set rejection = $3 where run_id = $1 and idx = any($2::int[])
     and outcome_enc is null and operation_id is null`,
    [runId, indexes, JSON.stringify({ name: "Withdrawn", message })],
  );
  ctx.platform.events.emit("run", { runId });
}
