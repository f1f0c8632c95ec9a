/**
 * The App-call gateway, for program calls, the model's direct calls and pages alike: the capability check
 * with the vault rule (`checkCall`), then one App operation (`performAppCall`): recorded as Running before
 * it is sent, secrets substituted at send time, the App called, everything that comes back redacted, the
 * outcome recorded.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type { CallOutcome } from "@/contracts/engine";
import { AppCallError, isAppCallError, type ToolEntry } from "../apps/registry";
import { logFailure, logOutcome } from "../log";
import { observeAppCall } from "../metrics";
import type { Platform } from "../platform";
import { progressRecorder } from "./app-progress";
import type { Principal } from "./auth";
import { checkAppCall } from "./capability";
import { grantFor, recordGrantUse } from "./grants";
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
 * A program's call (`call`) also meets taint and grants: once the run has read from a source of untrusted
 * content, a call that is not read-only asks even if its policy allows it; a call that would ask is
 * allowed by a matching remembered grant (the call's row says which), where a call carrying a vault
 * reference or following untrusted content counts only the run's own grants.
 */
export async function checkCall(
  platform: Platform,
  principal: Principal,
  entry: ToolEntry,
  argsJson: string,
  call?: { runId: string; chatId: string; index: number },
): Promise<CallCheck> {
  const policy = await storedPolicy(platform, entry);
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
  const taint = call && !isReadOnly(entry) ? taintReason(await runReads(platform, call.runId, false)) : null;
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
  if (!call) return { verdict: "ask", capability };
  const runOnly = taint !== null || referencedNames(argsJson).length > 0;
  const grantId = await grantFor(platform, { runId: call.runId, chatId: call.chatId, entry, argsJson }, runOnly);
  if (grantId) {
    await recordGrantUse(platform, grantId, call.runId, call.index);
    return { verdict: "allow", grantId };
  }
  const reads = await runReads(platform, call.runId);
  return { verdict: "ask", capability, context: { taint, provenance: provenance(JSON.parse(argsJson), reads) } };
}

/**
 * The tool's policy as stored now: an admin's edit on another instance binds this call at once, before
 * that instance's notification has reloaded the connection here. A removed connection denies.
 */
async function storedPolicy(platform: Platform, entry: ToolEntry): Promise<ToolEntry["policy"]> {
  const row = (
    await platform.db.query<{ policies: string }>("select policies from connections where id = $1", [
      entry.connectionId,
    ])
  )[0];
  if (!row) return "deny";
  try {
    const stored = (JSON.parse(row.policies) as Record<string, unknown>)[entry.name];
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
  },
): Promise<{ outcome: CallOutcome; operationId: string }> {
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
  const opId = `op_${randomUUID()}`;
  const sealOp = (field: string, value: unknown) =>
    platform.seal(`app_operations:${opId}:${field}`, JSON.stringify(value));
  // One statement: the operation row, and (for a program's call) the link from the run's call to it.
  await db.query(
    `with op as (
       insert into app_operations (id, execution_id, chat_id, run_id, call_index, connection_id, tool, status, args_enc, started_at)
       values ($1, $2, $3, $4, $5, $6, $7, 'Running', $8, $9) returning id)
     update code_run_calls set operation_id = (select id from op) where run_id = $4 and idx = $5`,
    [
      opId,
      `exe_${randomUUID()}`,
      call.chatId,
      call.runId,
      call.index,
      call.entry.connectionId,
      call.entry.name,
      sealOp("args", call.argsJson),
      Date.now(),
    ],
  );
  let outcome: CallOutcome;
  let stored: unknown;
  let status: "Completed" | "Failed";
  let errorReason: string | null = null;
  const secrets = [...substituted.secrets, ...(await knownSecrets(platform))];
  const traced = await traceCall(platform, call, () => JSON.stringify(redact(substituted.args, secrets)));
  const sentAt = performance.now();
  let answer = "ok";
  try {
    const progress = progressRecorder(platform, opId, call, (text) => redact(text, secrets));
    const tracked = trackRunCall(platform, call.runId);
    const result = redact(
      await platform.apps
        .call(call.entry, substituted.args, {
          userId: call.principal.userId,
          onProgress: progress.onProgress,
          signal: tracked.signal,
          ...(traced ? { traceMeta: traced.meta } : {}),
        })
        .catch((error: unknown) => {
          answer = isAppCallError(error) ? error.reason : "unavailable";
          throw error;
        })
        .finally(() => {
          tracked.done();
          return progress.flush();
        }),
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
    const known = raw
      ? new AppCallError(raw.reason, redact(raw.message, secrets), redact(raw.result, secrets), raw.input)
      : undefined;
    if (known?.reason === "input_required" && known.input) {
      const question = {
        message: redact(known.input.message, secrets),
        requestedSchema: redact(known.input.requestedSchema, secrets),
        binding: call.entry.binding,
      };
      await db.query(
        "update app_operations set status = 'InputRequired', input_id = $1, input_enc = $2 where id = $3",
        [known.input.id, sealOp("input", question), opId],
      );
      platform.track(settleInput(platform, opId, known.input.result, secrets));
      platform.events.emit("run", { runId: call.runId, chatId: call.chatId });
      const outcome: CallOutcome = {
        type: "error",
        name: "AppInputRequired",
        message: `${call.entry.binding} needs a person's input: answer App operation ${opId} outside the program.`,
        details: { operationId: opId, message: question.message },
      };
      return { outcome, operationId: opId };
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
  await db.query(
    "update app_operations set status = $1, result_enc = $2, error_reason = $3, finished_at = $4 where id = $5",
    [status, sealOp("result", stored), errorReason, Date.now(), opId],
  );
  return { outcome, operationId: opId };
}

/** When the person's answer to an App's question arrives, the App operation gets its final result. */
async function settleInput(
  platform: Platform,
  opId: string,
  result: Promise<unknown>,
  secrets: Substituted["secrets"],
): Promise<void> {
  let status = "Completed";
  let stored: unknown;
  let reason: string | null = null;
  try {
    stored = redact(await result, secrets);
  } catch (error) {
    status = "Failed";
    reason = isAppCallError(error) ? error.reason : "unavailable";
    const message = isAppCallError(error) ? redact(error.message, secrets) : "The App call failed.";
    stored = { error: { name: "AppCallFailed", message, details: { reason } } };
  }
  const rows = await platform.db.query<{ chat_id: string | null; run_id: string | null }>(
    "update app_operations set status = $1, result_enc = $2, error_reason = $3, finished_at = $4 where id = $5 returning chat_id, run_id",
    [status, platform.seal(`app_operations:${opId}:result`, JSON.stringify(stored)), reason, Date.now(), opId],
  );
  platform.events.emit("run", { runId: rows[0]?.run_id ?? null, chatId: rows[0]?.chat_id });
}
