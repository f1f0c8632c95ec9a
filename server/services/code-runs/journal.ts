/**
 * The journal: a run's calls, and nothing else. `decideCall` says what a nested call gets (an answer from
 * the record, a send, a pause, or a stop) from the record alone; it never calls an App, asks a person or
 * starts a model turn. How an attempt ends (finish, fail, withdraw) is endings.ts.
 */
import "server-only";
import type { RunTicket } from "@/contracts/code-run";
import type { CallOutcome, CallRequest, FailureReason, RecordedCall } from "@/contracts/engine";
import { CANONICAL_MAX_DEPTH, canonicalJson } from "@/worker/canonical-json";
import { discoveryOutcome, isDiscoveryBinding } from "../../apps/discovery";
import type { RetryParams, ToolEntry } from "../../apps/registry";
import { sha256 } from "../../crypto";
import { batched } from "../../db/batch";
import { type FinishedOperation, failedOutcome, storedPolicy } from "../app-calls";
import { claimRetry } from "../app-input";
import type { ServiceContext } from "../context";
import { decisionStatus } from "../decisions";
import { traceRefusedCall } from "../run-trace";
import { notRunning, recordCalls, recordOutcomes, writtenStop } from "./call-writes";
import { failRun } from "./endings";
import { type CallRow, open, type RunRow, runForCall, seal } from "./rows";
import { unknownStep } from "./unknown";

/**
 * The recorded outcomes of a run and the order they completed in: what a re-run replays. `next`: the
 * first index past every recorded call, with or without an outcome (nothing at or after it is recorded).
 */
export async function replayLog(
  ctx: ServiceContext,
  runId: string,
): Promise<{ log: RunTicket["input"]["replay"]; next: number }> {
  const all = await ctx.platform.db.query<CallRow>("select * from code_run_calls where run_id = $1 order by idx", [
    runId,
  ]);
  const next = all.length === 0 ? 0 : all[all.length - 1]!.idx + 1;
  const rows = all.filter((r) => r.outcome_enc !== null);
  if (rows.length === 0) return { log: undefined, next };
  const calls: RecordedCall[] = rows.map((r) => ({
    index: r.idx,
    binding: r.binding,
    argsJson: open<string>(ctx, "code_run_calls", `${runId}:${r.idx}`, "args", r.args_enc),
    outcome: open<CallOutcome>(ctx, "code_run_calls", `${runId}:${r.idx}`, "outcome", r.outcome_enc!),
  }));
  const completionOrder = [...rows].sort((a, b) => (a.completed_seq ?? 0) - (b.completed_seq ?? 0)).map((r) => r.idx);
  return { log: { calls, completionOrder }, next };
}

/**
 * Stores a call's outcome with its place in the completion order; with `operation`, the end of the call's
 * App operation in the same statement (one round trip, and the two can never disagree after a crash).
 */
export async function recordOutcome(
  ctx: ServiceContext,
  runId: string,
  index: number,
  outcome: CallOutcome,
  rejection: { name: string; message: string } | null,
  operation?: FinishedOperation,
): Promise<CallOutcome> {
  // One statement (shared with the other outcomes recorded at the same time, call-writes.ts): the run's
  // completion counter, the call's outcome and, with `operation`, the operation's end.
  await batched(ctx.platform.db, recordOutcomes, {
    runId,
    index,
    outcomeEnc: seal(ctx, "code_run_calls", `${runId}:${index}`, "outcome", outcome),
    rejection: rejection ? JSON.stringify(rejection) : null,
    at: Date.now(),
    ...(operation ? { operation } : {}),
  });
  ctx.platform.events.emit("run", { runId });
  return outcome;
}

/**
 * Largest argument JSON of one call, on every host alike: below the default request body limit
 * (OPENBOT_MAX_BODY_BYTES, 4 MiB) with room for the call's envelope, so a page's call is refused with the
 * same clear message as a server run's rather than a 413.
 */
const MAX_ARGS_JSON = 3 * 1024 * 1024;

/**
 * What a nested call gets, from the record alone:
 * - `answer`: an outcome without sending anything (recorded earlier, a denial recorded now, bad arguments);
 * - `send`: send it now: a call the record did not have (`fresh`: it still has to pass the capability
 *   check) or one a person allowed;
 * - `pause`: it waits for a person's decision;
 * - `stop`: the attempt ends (the run is over, a replay mismatch, an outcome that is unknown).
 * A fresh call is recorded here (its index, binding, source and sealed arguments) before anything is sent.
 */
export type CallStep =
  | { type: "answer"; outcome: CallOutcome }
  | {
      type: "send";
      fresh: boolean;
      run: RunRow;
      entry: ToolEntry;
      argsJson: string;
      /** The retry of a call parked on input, claimed here (app-input.ts): sent once with the answer. */
      resume?: { operationId: string; retry: RetryParams; round: number };
      /** The connection's stored policies, read with the call's record (null: the connection is gone). */
      policies?: string | null;
    }
  | { type: "pause" }
  | { type: "stop"; reason: Extract<FailureReason, "ReplayMismatch" | "Cancelled" | "Unavailable">; message: string };

export async function decideCall(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  call: CallRequest,
): Promise<CallStep> {
  const { run: known, principal } = await runForCall(ctx, runId, attempt);
  const stopped = notRunning(known.status);
  if (stopped) return stopped;
  if (call.argsJson.length > MAX_ARGS_JSON) {
    return answer(failedOutcome("invalid_arguments", `The arguments are larger than ${MAX_ARGS_JSON} bytes.`));
  }
  let argsJson: string;
  try {
    argsJson = canonicalJson(call.argsJson);
  } catch (error) {
    const message =
      error instanceof RangeError
        ? `The arguments are nested deeper than ${CANONICAL_MAX_DEPTH} levels, the most a call can carry.`
        : "The arguments are not JSON.";
    return answer(failedOutcome("invalid_arguments", message));
  }
  const digest = sha256(`${call.binding}\n${argsJson}`);
  const discovery = isDiscoveryBinding(call.binding);
  const bindings = JSON.parse(known.bindings) as string[];
  const entry = !discovery && bindings.includes(call.binding) ? ctx.platform.apps.resolve(call.binding) : undefined;
  const source = entry
    ? { connectionId: entry.connectionId, connectionName: entry.connectionName, name: entry.name }
    : { connectionId: "", connectionName: "", name: call.binding };
  // One statement (shared with the other calls recorded at the same time, call-writes.ts): the run's status
  // and attempt now, the call recorded (index, binding, source, sealed arguments) only while this attempt
  // is running and the index is new, and the tool's stored policies.
  const now = await batched(ctx.platform.db, recordCalls, {
    runId,
    index: call.index,
    binding: call.binding,
    source: JSON.stringify(source),
    argsEnc: seal(ctx, "code_run_calls", `${runId}:${call.index}`, "args", argsJson),
    digest,
    createdAt: Date.now(),
    attempt,
    connectionId: source.connectionId,
  });
  const stop = writtenStop(now, attempt);
  if (stop) return stop;
  const run: RunRow = { ...known, status: now.status as RunRow["status"], attempt };
  if (!now.inserted) {
    // The record has this index already (a replay past its log, or the same call arriving twice at once:
    // the first one owns it).
    const existing = (await readCall(ctx, runId, call.index))!;
    return recordedStep(ctx, run, principal.permissions.has("apps.use"), existing, call, digest, argsJson);
  }
  if (discovery) return answerDiscoveryCall(ctx, run, call, argsJson);
  if (!entry) {
    const message = `${call.binding} is not available now.`;
    const outcome = failedOutcome("unavailable", message);
    return answer(await recordOutcome(ctx, runId, call.index, outcome, { name: "AppCallFailed", message }));
  }
  return { type: "send", fresh: true, run, entry, argsJson, policies: now.policies };
}

const answer = (outcome: CallOutcome): CallStep => ({ type: "answer", outcome });

async function readCall(ctx: ServiceContext, runId: string, index: number): Promise<CallRow | undefined> {
  const rows = await ctx.platform.db.query<CallRow>("select * from code_run_calls where run_id = $1 and idx = $2", [
    runId,
    index,
  ]);
  return rows[0];
}

/**
 * A call the record already has at this index: it must be the same call (else ReplayMismatch, nothing
 * sent). Its stored outcome is the answer without contacting the App; a call a person allowed is sent now
 * (once), one they denied is answered AppCallDenied (recorded now); a call still waiting pauses again; a
 * call sent without a recorded outcome is never sent again blindly.
 */
async function recordedStep(
  ctx: ServiceContext,
  run: RunRow,
  mayUseApps: boolean,
  existing: CallRow,
  call: CallRequest,
  digest: string,
  argsJson: string,
): Promise<CallStep> {
  if (existing.args_digest !== digest) {
    const message = `Call ${call.index} is ${call.binding} with other arguments than the recorded ${existing.binding} call; nothing was sent.`;
    await failRun(ctx, run.id, "ReplayMismatch", message, []);
    return { type: "stop", reason: "ReplayMismatch", message };
  }
  if (existing.outcome_enc)
    return answer(open<CallOutcome>(ctx, "code_run_calls", `${run.id}:${call.index}`, "outcome", existing.outcome_enc));
  if (existing.operation_id) {
    // The call's App operation, read once for every path below.
    const op = (
      await ctx.platform.db.query<{ status: string; task: boolean }>(
        "select status, task_enc is not null as task from app_operations where id = $1",
        [existing.operation_id],
      )
    )[0];
    const status = op?.status;
    // The App runs it as a task not finished yet: it waits again (the poll job records its outcome).
    if (op?.task && (status === "Task" || status === "InputRequired")) return { type: "pause" };
    // Parked on a person's input: still waiting pauses again; answered is claimed and sent once.
    const parked = await parkedStep(ctx, run, mayUseApps, existing, status, call.binding, argsJson);
    if (parked) return parked;
    // Sent by a host that died before recording the outcome: a read (a resource or prompt, or a tool a
    // built-in App marks readOnlyHint) changes nothing, so it is sent again instead of failing the run.
    const entry = ctx.platform.apps.resolve(call.binding);
    if (entry && status === "Unknown" && isRead(ctx, entry)) return { type: "send", fresh: true, run, entry, argsJson };
    const source = JSON.parse(existing.source) as { connectionId: string; name: string };
    const same = entry && entry.connectionId === source.connectionId && entry.name === source.name ? entry : undefined;
    const next = mayUseApps ? await unknownStep(ctx, run, existing, same, status) : "stop";
    if (next === "pause") return { type: "pause" };
    if (next === "send" && same) return { type: "send", fresh: false, run, entry: same, argsJson };
    const message = `Call ${call.index} (${call.binding}) was sent, but its outcome is unknown; it was not sent again.`;
    return { type: "stop", reason: "Unavailable", message };
  }
  const decision = existing.decision_id ? await decisionStatus(ctx.platform.db, existing.decision_id) : null;
  if (decision === "pending") return { type: "pause" };
  if (decision === "denied") {
    const message = `${call.binding} was not allowed by the person deciding.`;
    const outcome: CallOutcome = {
      type: "error",
      name: "AppCallDenied",
      message,
      details: { binding: call.binding, decisionId: existing.decision_id },
    };
    const entry = ctx.platform.apps.resolve(call.binding);
    await traceRefusedCall(ctx.platform, { runId: run.id, index: call.index, entry }, outcome);
    return answer(await recordOutcome(ctx, run.id, call.index, outcome, { name: "AppCallDenied", message }));
  }
  if (decision === "allowed") {
    const entry = ctx.platform.apps.resolve(call.binding);
    const source = JSON.parse(existing.source) as { connectionId: string; name: string };
    if (!entry || entry.connectionId !== source.connectionId || entry.name !== source.name) {
      const message = `${call.binding} changed while the run waited; nothing was sent.`;
      await failRun(ctx, run.id, "ReplayMismatch", message, []);
      return { type: "stop", reason: "ReplayMismatch", message };
    }
    if (!mayUseApps) return { type: "stop", reason: "Cancelled", message: "The caller lost apps.use." };
    // A person's allow does not outrank an admin's deny set while the run waited: the policy stored now
    // (read here, not the reloaded catalog: the edit may come from another instance) binds the call.
    if ((await storedPolicy(ctx.platform, entry)) === "deny") {
      const message = `${call.binding} is denied by the platform's policy now; nothing was sent.`;
      const outcome: CallOutcome = {
        type: "error",
        name: "AppCallDenied",
        message,
        details: { binding: call.binding },
      };
      await traceRefusedCall(ctx.platform, { runId: run.id, index: call.index, entry }, outcome);
      return answer(await recordOutcome(ctx, run.id, call.index, outcome, { name: "AppCallDenied", message }));
    }
    return { type: "send", fresh: false, run, entry, argsJson };
  }
  return { type: "stop", reason: "Unavailable", message: `Call ${call.index} has no stored outcome.` };
}

/**
 * A recorded call whose App operation asked for input (app-input.ts): InputRequired pauses; InputAnswered
 * is claimed (one statement: only one host gets it) and sent again with the answer, unless the binding
 * changed meanwhile (then nothing is sent). Undefined: the operation is not parked (the ordinary paths).
 */
async function parkedStep(
  ctx: ServiceContext,
  run: RunRow,
  mayUseApps: boolean,
  existing: CallRow,
  status: string | undefined,
  binding: string,
  argsJson: string,
): Promise<CallStep | undefined> {
  const operationId = existing.operation_id!;
  if (status === "InputRequired") return { type: "pause" };
  if (status !== "InputAnswered") return undefined;
  if (!mayUseApps) return { type: "stop", reason: "Cancelled", message: "The caller lost apps.use." };
  const entry = ctx.platform.apps.resolve(binding);
  const source = JSON.parse(existing.source) as { connectionId: string; name: string };
  if (!entry || entry.connectionId !== source.connectionId || entry.name !== source.name) {
    const message = `${binding} changed while the run waited for input; nothing was sent.`;
    await failRun(ctx, run.id, "ReplayMismatch", message, []);
    return { type: "stop", reason: "ReplayMismatch", message };
  }
  const claimed = await claimRetry(ctx.platform, operationId);
  if (!claimed) return undefined;
  return { type: "send", fresh: false, run, entry, argsJson, resume: { operationId, ...claimed } };
}

/** A call whose loss changes nothing: a resource or prompt read, or a tool a built-in App marks readOnlyHint. */
function isRead(ctx: ServiceContext, entry: ToolEntry): boolean {
  const trusted = ctx.platform.apps.isBuiltin(entry.connectionId);
  return entry.kind === "resource" || entry.kind === "prompt" || (trusted && entry.annotations?.readOnlyHint === true);
}

/**
 * A call that waits for decision `decisionId`: linked to it. The run stays Running (its program runs on);
 * it becomes Waiting when its host reports that nothing else can run (finishRun).
 */
export async function awaitDecision(
  ctx: ServiceContext,
  run: RunRow,
  index: number,
  decisionId: string,
): Promise<void> {
  await ctx.platform.db.query("update code_run_calls set decision_id = $1 where run_id = $2 and idx = $3", [
    decisionId,
    run.id,
    index,
  ]);
  ctx.platform.events.emit("run", { runId: run.id, chatId: run.chat_id });
}

/**
 * `apps.$search` / `apps.$describe`: answered from the run's own catalog (its bindings as they resolve
 * now, `deny` left out) without calling any App, and recorded like a call so a replay gets the same answer.
 */
async function answerDiscoveryCall(
  ctx: ServiceContext,
  run: RunRow,
  call: CallRequest,
  argsJson: string,
): Promise<CallStep> {
  const catalog = (JSON.parse(run.bindings) as string[]).flatMap((b) => {
    const entry = ctx.platform.apps.resolve(b);
    return entry && entry.policy !== "deny" ? [entry] : [];
  });
  const outcome = await discoveryOutcome(call.binding, argsJson, catalog);
  return answer(await recordOutcome(ctx, run.id, call.index, outcome, null));
}
