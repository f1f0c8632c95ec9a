/**
 * The App-call gateway, for program calls, the model's direct calls and pages alike: the capability check
 * with the vault rule (`checkCall`), then one App operation (`performAppCall`): recorded as Running before
 * it is sent, secrets substituted at send time, the App called, everything that comes back redacted, the
 * outcome recorded.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type { CallOutcome } from "@/contracts/engine";
import { AppCallError, isAppCallError, type RetryParams, type TaskState, type ToolEntry } from "../apps/registry";
import { batched } from "../db/batch";
import { logFailure, logOutcome } from "../log";
import { observeAppCall } from "../metrics";
import type { Platform } from "../platform";
import { parkable, parkOperation } from "./app-input";
import { progressRecorder } from "./app-progress";
import type { Principal } from "./auth";
import { checkAppCall } from "./capability";
import { grantFor, recordGrantUse } from "./grants";
import { type OperationStart, startOperations } from "./operation-writes";
import { trackRunCall } from "./run-app-calls";
import { traceCall } from "./run-trace";
import { isReadOnly, type Provenance, provenance, runReads, taintReason } from "./taint";
import {
  isVaultDeniedError,
  knownSecrets,
  redact,
  referencedNames,
  type Substituted,
  substituteSecrets,
  vaultRefusal,
} from "./vault";

/** Largest result JSON the server hands to a program. */
const MAX_CALL_JSON = 8 * 1024 * 1024;

/** An unexpected App failure as it may be logged: the same name, message and stack with every secret hidden. */
function redactError(error: unknown, secrets: Substituted["secrets"]): Error {
  const e = error instanceof Error ? error : new Error(String(error));
  const safe = new Error(redact(e.message, secrets));
  safe.name = e.name;
  safe.stack = e.stack === undefined ? undefined : redact(e.stack, secrets);
  return safe;
}

/** Why a program's call is asked about, for the card: what the run read that may carry instructions, and where each argument came from. */
export interface AskContext {
  taint: string | null;
  provenance: Provenance[];
}

export type CallCheck =
  | { verdict: "allow"; grantId?: string }
  | { verdict: "ask"; capability: { action: "apps.call"; target: string }; context?: AskContext }
  | {
      verdict: "refuse";
      outcome: Extract<CallOutcome, { type: "error" }>;
      rejection: { name: string; message: string };
    };

/**
 * The gateway's check before anything is recorded as sent or anyone is asked: the capability (apps.use,
 * the tool's policy; a vault reference always asks) and the vault rule (the references must be usable by
 * this person and allowed for this tool), so nobody approves a call that would then fail VaultDenied.
 * A call without references needs no vault read; an allowed call with references is checked again when
 * its secrets are put in (`performAppCall`), since the vault may change while a person decides.
 *
 * A program's call (`call` with its run) also meets taint: once the run has read from a source of untrusted
 * content, a call that is not read-only asks even if its policy allows it. A call that would ask is allowed
 * by a matching remembered grant (a program's call row says which); a direct (model) call (`call` with
 * `runId: null`) meets its chat's grants and the grants to everyone. A call carrying a vault reference or
 * following untrusted content counts only its run's own grants (a direct call none).
 */
export async function checkCall(
  platform: Platform,
  principal: Principal,
  entry: ToolEntry,
  argsJson: string,
  call?:
    | { runId: string; chatId: string; index: number; policies?: string | null }
    | { runId: null; chatId: string; index: null; policies?: undefined },
): Promise<CallCheck> {
  const policy = policyOf(
    entry,
    call?.policies !== undefined ? call.policies : await storedPolicies(platform, entry.connectionId),
  );
  const verdict = checkAppCall(principal, policy === entry.policy ? entry : { ...entry, policy }, argsJson);
  if (verdict.verdict === "deny") {
    const outcome: Extract<CallOutcome, { type: "error" }> = {
      type: "error",
      name: "AppCallDenied",
      message: verdict.message,
      details: { binding: entry.binding },
    };
    return { verdict: "refuse", outcome, rejection: { name: "AppCallDenied", message: verdict.message } };
  }
  // Taint needs only which tools the run heard from; the texts (decrypted) only when a person is asked.
  const taint = call?.runId && !isReadOnly(entry) ? taintReason(await runReads(platform, call.runId, false)) : null;
  if (verdict.verdict === "allow" && taint === null) return verdict;
  const refusal = await vaultRefusal(platform, argsJson, entry, principal);
  if (refusal) {
    const outcome: Extract<CallOutcome, { type: "error" }> = {
      type: "error",
      name: "VaultDenied",
      message: `${refusal} Nothing was sent.`,
      details: { binding: entry.binding },
    };
    return { verdict: "refuse", outcome, rejection: { name: "VaultDenied", message: refusal } };
  }
  const capability =
    verdict.verdict === "ask"
      ? verdict.capability
      : { action: "apps.call" as const, target: `${entry.connectionId}/${entry.name}` };
  const referenced = referencedNames(argsJson).length > 0;
  // Checked only where it decides: not for a call a grant lets go (it is checked again as it is sent).
  const unfit = () => (referenced ? null : unfitArguments(platform, entry, argsJson));
  if (!call) return unfit() ?? { verdict: "ask", capability };
  const runOnly = taint !== null || referenced;
  const grantId = await grantFor(platform, { runId: call.runId, chatId: call.chatId, entry, argsJson }, runOnly);
  if (grantId) {
    await recordGrantUse(platform, grantId, call.runId === null ? null : { runId: call.runId, index: call.index });
    return { verdict: "allow", grantId };
  }
  const invalid = unfit();
  if (invalid) return invalid;
  if (call.runId === null) return { verdict: "ask", capability };
  const reads = await runReads(platform, call.runId);
  return { verdict: "ask", capability, context: { taint, provenance: provenance(JSON.parse(argsJson), reads) } };
}

/**
 * A call whose arguments do not fit the tool's input schema could only fail when sent
 * (`invalid_arguments`), so no person is asked to allow it: it is refused as that failure at once, each
 * field named. A call with a vault reference is checked when its secret is put in (the reference is not
 * the value the schema describes), and one a grant allows fails as it is sent, as before.
 */
function unfitArguments(platform: Platform, entry: ToolEntry, argsJson: string): CallCheck | null {
  const problem = platform.apps.argumentProblem(entry, JSON.parse(argsJson));
  if (!problem) return null;
  const details = { reason: "invalid_arguments", binding: entry.binding };
  return {
    verdict: "refuse",
    outcome: { type: "error", name: "AppCallFailed", message: problem, details },
    rejection: { name: "AppCallFailed", message: problem },
  };
}

/**
 * The tool's policy as stored now: an admin's edit on another instance binds this call at once, before
 * that instance's notification has reloaded the connection here. A removed connection (no row: `null`)
 * denies. A program's call has the row read with its record (`decideCall`); others read it here.
 */
async function storedPolicies(platform: Platform, connectionId: string): Promise<string | null> {
  const rows = await platform.db.query<{ policies: string }>("select policies from connections where id = $1", [
    connectionId,
  ]);
  return rows[0]?.policies ?? null;
}

/** The tool's policy as stored now (see `storedPolicies`). */
export async function storedPolicy(platform: Platform, entry: ToolEntry): Promise<ToolEntry["policy"]> {
  return policyOf(entry, await storedPolicies(platform, entry.connectionId));
}

function policyOf(entry: ToolEntry, policies: string | null): ToolEntry["policy"] {
  if (policies === null) return "deny";
  try {
    const stored = (JSON.parse(policies) as Record<string, unknown>)[entry.name];
    return stored === "allow" || stored === "ask" || stored === "deny" ? stored : entry.defaultPolicy;
  } catch {
    return entry.policy;
  }
}

export function failedOutcome(reason: string, message: string): CallOutcome {
  return { type: "error", name: "AppCallFailed", message, details: { reason } };
}

/**
 * One App operation: recorded as Running before it is sent and with its outcome after, so a crash in
 * between leaves a visible Unknown, never a silent resend. Used by programs, direct tool calls and pages
 * alike. `principal`: whose vault rights apply. What comes back (result, error text, an App's question)
 * is redacted against every secret in the vault before it is stored, logged or returned.
 *
 * A program's call (runId set) that an App asks for input is `parked`: its operation waits as
 * InputRequired with the question stored (app-input.ts), no outcome is recorded and the returned
 * `outcome` is only what the program gets if nobody answers; the journal pauses the call. `resume`: the
 * re-run's retry of such an operation (already claimed, see claimRetry), sent with the person's answer.
 */
export async function performAppCall(
  platform: Platform,
  call: {
    chatId: string | null;
    runId: string | null;
    index: number | null;
    entry: ToolEntry;
    argsJson: string;
    principal: Principal;
    /** A program's call: the App may answer with a task (MCP Tasks); the call is then `parked` (see below). */
    tasks?: boolean;
    resume?: { operationId: string; retry: RetryParams; round: number };
    /**
     * Stores the operation's end instead of the plain update: a program's call writes it in one statement
     * with the call's outcome (journal `recordOutcome`). Not called when the App asks for input.
     */
    finish?: (operation: FinishedOperation, outcome: CallOutcome, start: OperationStart) => Promise<void>;
    /**
     * A read-only program call sent before anything is written (code-runs/reads.ts): the operation's start
     * is not written before sending; `finish` writes it with its end. Only when the App parks the call
     * (a task, a question) is `start` called first, so the park has its rows. `fingerprint`: the vault
     * the answer is redacted with (`finish` writes only while it holds).
     */
    deferred?: { fingerprint: string; start(start: OperationStart): Promise<void> };
  },
): Promise<{ outcome: CallOutcome; operationId: string; parked?: boolean }> {
  const { db } = platform;
  let substituted: Substituted;
  try {
    substituted = await substituteSecrets(platform, call.argsJson, call.entry, call.principal);
  } catch (error) {
    if (!isVaultDeniedError(error)) throw error;
    const outcome: CallOutcome = {
      type: "error",
      name: "VaultDenied",
      message: `${error.message} Nothing was sent.`,
      details: { binding: call.entry.binding },
    };
    return { outcome, operationId: "" };
  }
  const opId = call.resume?.operationId ?? `op_${randomUUID()}`;
  const sealOp = (field: string, value: unknown) =>
    platform.seal(`app_operations:${opId}:${field}`, JSON.stringify(value));
  // One statement (shared with the operations starting at the same time, operation-writes.ts): the
  // operation row, (for a program's call) the link from the run's call to it, and the vault's fingerprint
  // (which secrets to redact). It is durable before the App hears of the call.
  // A parked call's retry reuses its operation row (app-input.ts). A program's call has its arguments
  // sealed once, on the run's call the operation is linked to (code_run_calls.args_enc, the same JSON).
  const program = call.runId !== null && call.index !== null;
  const start: OperationStart = {
    id: opId,
    executionId: `exe_${randomUUID()}`,
    chatId: call.chatId,
    runId: call.runId,
    callIndex: call.index,
    connectionId: call.entry.connectionId,
    tool: call.entry.name,
    argsEnc: call.resume || program ? null : sealOp("args", call.argsJson),
    startedAt: Date.now(),
  };
  const written = call.resume || call.deferred ? undefined : await batched(db, startOperations, start);
  // A deferred start is written before the rows a park updates.
  let deferred = call.deferred;
  const started = async () => {
    const d = deferred;
    deferred = undefined;
    if (d) await d.start(start);
  };
  let outcome: CallOutcome;
  let stored: unknown;
  let status: "Completed" | "Failed";
  let errorReason: string | null = null;
  const secrets = [
    ...substituted.secrets,
    ...(await knownSecrets(platform, written?.fingerprint ?? call.deferred?.fingerprint)),
  ];
  // Tracing off (the usual case): no async call and await per call for a span that is never made.
  const traced = platform.telemetry.enabled
    ? await traceCall(platform, call, () => JSON.stringify(redact(substituted.args, secrets)))
    : null;
  const sentAt = performance.now();
  let answer = "ok";
  try {
    const progress = progressRecorder(platform, opId, call, (text) => redact(text, secrets));
    const result = redact(
      await platform.apps
        .call(call.entry, substituted.args, {
          userId: call.principal.userId,
          onProgress: progress.onProgress,
          onCancel: trackRunCall(platform, call.runId),
          ...(call.tasks ? { tasks: true } : {}),
          // A program's call parks durably instead of waiting in memory for a 2026-07-28 server's question.
          ...(call.runId ? { inputRequired: "return" as const, retry: call.resume?.retry } : {}),
          ...(traced ? { traceMeta: traced.meta } : {}),
        })
        .catch((error: unknown) => {
          answer = isAppCallError(error) ? error.reason : "unavailable";
          throw error;
        })
        .finally(() => progress.flush()),
      secrets,
    );
    observeAppCall(call.entry.connectionId, answer, (performance.now() - sentAt) / 1000);
    const resultJson = JSON.stringify(result);
    if (resultJson.length > MAX_CALL_JSON)
      throw new AppCallError("tool_error", `The result is larger than ${MAX_CALL_JSON} bytes.`);
    outcome = { type: "ok", resultJson };
    stored = result;
    status = "Completed";
  } catch (error: unknown) {
    // The registry lives in another module graph in the build: its errors are told apart by their tag.
    if (answer !== "ok") observeAppCall(call.entry.connectionId, answer, (performance.now() - sentAt) / 1000);
    const raw = isAppCallError(error) ? error : undefined;
    let known = raw
      ? new AppCallError(raw.reason, redact(raw.message, secrets), redact(raw.result, secrets), raw.input)
      : undefined;
    if (raw?.reason === "task_started" && raw.task) {
      await started();
      await parkOnTask(platform, opId, call, raw.task, sealOp, secrets);
      const outcome = failedOutcome("task_started", `${call.entry.binding} runs as a task; its result comes later.`);
      traced?.end(outcome);
      return { outcome, operationId: opId, parked: true };
    }
    if (known?.reason === "input_required" && raw?.asked && call.runId) {
      const parked = parkable(raw.asked, call.entry.binding, call.resume?.round ?? 0);
      if ("question" in parked) {
        const question = {
          ...parked.question,
          message: redact(parked.question.message, secrets),
          requestedSchema: redact(parked.question.requestedSchema, secrets),
          ...(parked.question.url ? { url: redact(parked.question.url, secrets) } : {}),
        };
        await started();
        await parkOperation(platform, opId, { question, state: parked.state });
        platform.events.emit("run", { runId: call.runId, chatId: call.chatId });
        const outcome = inputOutcome(call.entry.binding, opId, question.message);
        traced?.end(outcome);
        return { outcome, operationId: opId, parked: true };
      }
      known = new AppCallError("tool_error", redact(parked.problem, secrets));
    }
    if (known?.reason === "input_required" && known.input) {
      const question = {
        message: redact(known.input.message, secrets),
        requestedSchema: redact(known.input.requestedSchema, secrets),
        binding: call.entry.binding,
      };
      // An older server's elicitation/create: the App holds the request open, so this pause lives only as
      // long as this process and the App's own deadline (see settleInput and answerPendingInput).
      await started();
      await db.query(
        "update app_operations set status = 'InputRequired', input_id = $1, input_enc = $2, input_expires_at = $3 where id = $4",
        [
          known.input.id,
          sealOp("input", { ...question, mode: "form", heldBy: platform.instanceId }),
          known.input.expiresAt,
          opId,
        ],
      );
      // Not tracked: the App may hold the question for its whole input window, which must not delay a shutdown.
      void settleInput(platform, opId, known.input.result, secrets).catch(() => undefined);
      platform.events.emit("run", { runId: call.runId, chatId: call.chatId });
      const outcome = inputOutcome(call.entry.binding, opId, question.message);
      traced?.end(outcome);
      return call.runId ? { outcome, operationId: opId, parked: true } : { outcome, operationId: opId };
    }
    const reason = known?.reason ?? "unavailable";
    const message = known?.message ?? "The App could not be reached.";
    const where = { runId: call.runId, index: call.index, operationId: opId };
    if (known) logOutcome("app_call_failed", `AppCallError:${reason}`, where);
    else logFailure("app_call_failed", redactError(error, secrets), where);
    const details: Record<string, unknown> = { reason };
    if (known?.result !== undefined) details.result = known.result;
    outcome = { type: "error", name: "AppCallFailed", message, details };
    stored = { error: { name: "AppCallFailed", message, details } };
    status = "Failed";
    errorReason = reason;
  }
  traced?.end(outcome);
  // Stored with the call's outcome (`finish`), the result is that outcome's, sealed once there: the
  // operation's own copy stays null (code-runs/records.ts reads it from the outcome).
  const finished: FinishedOperation = {
    id: opId,
    status,
    resultEnc: call.finish ? null : sealOp("result", stored),
    errorReason,
    finishedAt: Date.now(),
  };
  if (call.finish) await call.finish(finished, outcome, start);
  else
    await db.query(
      "update app_operations set status = $1, result_enc = $2, error_reason = $3, finished_at = $4 where id = $5",
      [finished.status, finished.resultEnc, finished.errorReason, finished.finishedAt, opId],
    );
  return { outcome, operationId: opId };
}

/**
 * The App answered with a task: the operation becomes `Task` with the task sealed beside it, and the
 * durable job `poll-task` (code-runs/tasks.ts) watches it from here, on whichever instance takes it.
 * The call is parked: no outcome yet, so the run waits without holding a worker or a model turn.
 */
async function parkOnTask(
  platform: Platform,
  opId: string,
  call: { runId: string | null; chatId: string | null },
  task: TaskState,
  sealOp: (field: string, value: unknown) => string,
  secrets: Substituted["secrets"],
): Promise<void> {
  const statusMessage = task.statusMessage === undefined ? null : redact(task.statusMessage, secrets);
  const stored = { taskId: task.taskId, status: task.status, statusMessage };
  await platform.db.query("update app_operations set status = 'Task', task_status = $1, task_enc = $2 where id = $3", [
    task.status,
    sealOp("task", stored),
    opId,
  ]);
  await platform.jobs.enqueue(
    "poll-task",
    { operationId: opId, polls: 0 },
    { key: `poll-task:${opId}:0`, delayMs: Math.max(task.pollIntervalMs ?? 1_000, 100) },
  );
  platform.events.emit("run", { runId: call.runId, chatId: call.chatId });
}

/** What a call gets when its question is not answered (a direct call at once; a program's call when declined or expired). */
export function inputOutcome(
  binding: string,
  operationId: string,
  message: string,
  action?: "decline" | "cancel" | "expired",
): Extract<CallOutcome, { type: "error" }> {
  const text = action
    ? `${binding} asked for a person's input, which was ${action === "expired" ? "not given in time" : action === "decline" ? "declined" : "cancelled"}.`
    : `${binding} needs a person's input: answer App operation ${operationId} outside the program.`;
  return {
    type: "error",
    name: "AppInputRequired",
    message: text,
    details: { operationId, message, ...(action ? { action } : {}) },
  };
}

/**
 * An App operation's end as `performAppCall` stores it: the sealed result, or null when it is stored
 * with a program's call outcome (`finish`), which carries the same result.
 */
export interface FinishedOperation {
  id: string;
  status: "Completed" | "Failed";
  resultEnc: string | null;
  errorReason: string | null;
  finishedAt: number;
}

/**
 * When the person's answer to an App's question arrives, the App operation gets its final result; a
 * program's call gets it as its outcome (`app-input-result`: parked.ts records it and re-runs the run).
 */
async function settleInput(
  platform: Platform,
  opId: string,
  result: Promise<unknown>,
  secrets: Substituted["secrets"],
): Promise<void> {
  let status = "Completed";
  let stored: unknown;
  let reason: string | null = null;
  let outcome: CallOutcome;
  try {
    stored = redact(await result, secrets);
    if (platform.closing) return;
    outcome = { type: "ok", resultJson: JSON.stringify(stored) };
  } catch (error) {
    // Shutting down cancelled the App's request: the question stays as it was, lost with this process.
    if (platform.closing) return;
    status = "Failed";
    reason = isAppCallError(error) ? error.reason : "unavailable";
    const message = isAppCallError(error) ? redact(error.message, secrets) : "The App call failed.";
    const details: Record<string, unknown> = { reason };
    if (isAppCallError(error) && error.result !== undefined) details.result = redact(error.result, secrets);
    stored = { error: { name: "AppCallFailed", message, details } };
    outcome = { type: "error", name: "AppCallFailed", message, details };
  }
  const rows = await platform.db.query<{ chat_id: string | null; run_id: string | null }>(
    "update app_operations set status = $1, result_enc = $2, error_reason = $3, finished_at = $4 where id = $5 and status = 'InputRequired' returning chat_id, run_id",
    [status, platform.seal(`app_operations:${opId}:result`, JSON.stringify(stored)), reason, Date.now(), opId],
  );
  if (!rows[0]) return; // expired or settled meanwhile
  platform.events.emit("run", { runId: rows[0].run_id, chatId: rows[0].chat_id });
  if (rows[0].run_id) platform.events.emit("app-input-result", { operationId: opId, outcome });
}
