/**
 * Code runs: a program and the record of all its calls. The server is the source of truth for the run's
 * time, seed, limits, bindings and replay log, so any host (the page's worker or the server runner)
 * can run an attempt and behave the same. Every nested call comes through `handleCall`: replay check
 * against the record, capability check, the App call, and persistence of its outcome and completion
 * order. Code, arguments, results and logs are stored encrypted.
 */
import "server-only";
import { randomInt, randomUUID } from "node:crypto";
import {
  type AppOperationView,
  type CodeRunCallView,
  type CodeRunRecord,
  type CodeRunResult,
  type CodeRunStatus,
  type RunTicket,
  startRunInput,
} from "@/contracts/code-run";
import type {
  CallOutcome,
  CallRequest,
  EngineLimits,
  FailureReason,
  HostCallAnswer,
  RecordedCall,
  RunOutcome,
} from "@/contracts/engine";
import { CANONICAL_MAX_DEPTH, canonicalJson, utf8Length } from "@/worker/canonical-json";
import { discoveryOutcome, isDiscoveryBinding } from "../apps/discovery";
import { AppCallError, isAppCallError, type ToolEntry } from "../apps/registry";
import { sha256 } from "../crypto";
import { logEvent, logFailure, logOutcome } from "../log";
import type { Platform } from "../platform";
import type { RunPass } from "../run-admission";
import { progressRecorder } from "./app-progress";
import { type Principal, principalFromKeyId, requirePermission } from "./auth";
import { checkAppCall } from "./capability";
import { ownedChat, readableChat, touchChat } from "./chats";
import { AppError, invalidInput } from "./errors";
import { cancelRunCalls, trackRunCall } from "./run-app-calls";
import { readSettings } from "./settings";
import { transpileTypeScript } from "./transpile";
import {
  isVaultDeniedError,
  knownSecrets,
  redact,
  type Substituted,
  substituteSecrets,
  vaultNames,
  vaultRefusal,
} from "./vault";

/** Largest result JSON the server hands to a program. */
const MAX_CALL_JSON = 8 * 1024 * 1024;
/**
 * Largest argument JSON of one call, on every host alike: below the default request body limit
 * (OPENBOT_MAX_BODY_BYTES, 4 MiB) with room for the call's envelope, so a page's call is refused with the
 * same clear message as a server run's rather than a 413.
 */
const MAX_ARGS_JSON = 3 * 1024 * 1024;

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

interface RunRow {
  id: string;
  execution_id: string;
  chat_id: string;
  turn_id: string | null;
  call_id: string | null;
  created_by: string;
  api_key_id: string | null;
  status: CodeRunStatus;
  language: "javascript" | "typescript";
  code_enc: string;
  reason_enc: string;
  run_time: string | number;
  seed: string | number;
  limits: string;
  bindings: string;
  vault_names: string | null;
  attempt: number;
  host: string;
  result_enc: string | null;
  failure_reason: FailureReason | null;
  error_id: string | null;
  created_at: string | number;
  updated_at: string | number;
}

interface CallRow {
  run_id: string;
  idx: number;
  binding: string;
  source: string;
  args_enc: string;
  args_digest: string;
  operation_id: string | null;
  outcome_enc: string | null;
  rejection: string | null;
  completed_seq: number | null;
  decision_id: string | null;
}

interface OperationRow {
  id: string;
  execution_id: string;
  status: AppOperationView["status"];
  result_enc: string | null;
  progress_enc: string | null;
  started_at: string | number;
  finished_at: string | number | null;
}

export interface ServiceContext {
  platform: Platform;
  principal: Principal | null;
}

const seal = (ctx: ServiceContext, table: string, id: string, column: string, value: unknown) =>
  ctx.platform.seal(`${table}:${id}:${column}`, JSON.stringify(value));
const open = <T>(ctx: ServiceContext, table: string, id: string, column: string, value: string): T =>
  JSON.parse(ctx.platform.open(`${table}:${id}:${column}`, value)) as T;

/** Creates a run and hands back what a host needs to run its first attempt. */
export async function startRun(
  ctx: ServiceContext,
  input: unknown,
  host: "browser" | "server",
  links: { turnId?: string; callId?: string } = {},
): Promise<{ ticket: RunTicket | null; record: CodeRunRecord }> {
  const p = requirePermission(ctx.principal, "apps.use");
  const parsed = startRunInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const { chatId, code, reason, language } = parsed.data;
  const { db } = ctx.platform;
  await ownedChat(db, p, chatId);
  const settings = await readSettings(db);
  const limits: EngineLimits = {
    timeoutMs: settings.codeMode.timeoutMs,
    memoryMb: settings.codeMode.memoryMb,
    outputBytes: settings.codeMode.outputBytes,
    maxPendingCalls: settings.codeMode.maxPendingCalls,
  };
  const bindings = ctx.platform.apps.catalog().map((t) => t.binding);
  const id = `run_${randomUUID()}`;
  const now = Date.now();
  const time = now;
  const seed = randomInt(1, 2 ** 31 - 1);
  await db.query(
    `insert into code_runs (id, execution_id, chat_id, created_by, api_key_id, status, language, code_enc, reason_enc,
       run_time, seed, limits, bindings, host, created_at, updated_at, turn_id, call_id, claimed_at, vault_names)
     values ($1, $2, $3, $4, $14, 'Running', $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $15, $16, $17, $18)`,
    [
      id,
      `exe_${randomUUID()}`,
      chatId,
      p.userId,
      language,
      seal(ctx, "code_runs", id, "code", code),
      seal(ctx, "code_runs", id, "reason", reason),
      time,
      seed,
      JSON.stringify(limits),
      JSON.stringify(bindings),
      host,
      now,
      p.keyId,
      links.turnId ?? null,
      links.callId ?? null,
      links.turnId ? null : now,
      JSON.stringify(await vaultNames(ctx.platform, p)),
    ],
  );
  await touchChat(db, chatId);
  ctx.platform.events.emit("run", { runId: id, chatId });
  if (!settings.codeMode.enabled) {
    await failRun(ctx, id, "Unavailable", "Code Mode is off: an admin can turn it on in Admin → Settings.", []);
    return { ticket: null, record: await getRun(ctx, id) };
  }
  const ticket = await ticketFor(ctx, await loadRun(ctx, id));
  return { ticket, record: await getRun(ctx, id) };
}

/** What a host needs to run the run's current attempt; null when the program cannot even start (the run is failed). */
async function ticketFor(ctx: ServiceContext, run: RunRow): Promise<RunTicket | null> {
  let js = open<string>(ctx, "code_runs", run.id, "code", run.code_enc);
  if (run.language === "typescript") {
    const out = await transpileTypeScript(js);
    if (!out.ok) {
      await failRun(ctx, run.id, "Error", out.message, []);
      return null;
    }
    js = out.code;
  }
  return {
    runId: run.id,
    attempt: run.attempt,
    input: {
      code: js,
      time: Number(run.run_time),
      seed: Number(run.seed),
      limits: JSON.parse(run.limits) as EngineLimits,
      bindings: JSON.parse(run.bindings) as string[],
      vaultNames: run.vault_names
        ? (JSON.parse(run.vault_names) as string[])
        : ctx.principal
          ? await vaultNames(ctx.platform, ctx.principal)
          : [],
      replay: await replayLog(ctx, run.id),
    },
  };
}

/**
 * Runs the program again from the top on the server runner, once no decision of the run is pending.
 * It acts as the API key that started the run; if that key is gone the run ends as Interrupted.
 */
export async function resumeRun(
  platform: Platform,
  runId: string,
  from: { status: "Waiting" } | { status: "Running"; attempt: number } = { status: "Waiting" },
): Promise<void> {
  const { db } = platform;
  const pending = await db.query("select 1 from decisions where run_id = $1 and status = 'pending'", [runId]);
  if (pending.length) return;
  const owner = (
    await db.query<{ api_key_id: string | null }>("select api_key_id from code_runs where id = $1", [runId])
  )[0];
  const principal = owner?.api_key_id ? await principalFromKeyId(db, owner.api_key_id) : null;
  const ctx: ServiceContext = { platform, principal };
  if (!principal) {
    await failRun(ctx, runId, "Interrupted", "The run's caller is gone, so it was not run again.", []);
    return;
  }
  const rows =
    from.status === "Waiting"
      ? await db.query<RunRow>(
          `update code_runs set attempt = attempt + 1, status = 'Running', host = 'server', claimed_at = $2, updated_at = $2
           where id = $1 and status = 'Waiting' returning *`,
          [runId, Date.now()],
        )
      : await db.query<RunRow>(
          `update code_runs set attempt = attempt + 1, status = 'Running', host = 'server', claimed_at = $2, updated_at = $2
           where id = $1 and status in ('Running', 'Queued') and attempt = $3 returning *`,
          [runId, Date.now(), from.attempt],
        );
  if (!rows[0]) return;
  platform.events.emit("run", { runId, chatId: rows[0].chat_id });
  const ticket = await ticketFor(ctx, rows[0]);
  if (ticket) await runTicketOnServer(ctx, ticket);
}

/** How long a run may go without any sign of its host before the server takes it over. */
const STALE_GRACE_MS = 60_000;

/**
 * Finishes what a dead host left behind, on start and then periodically. An App operation still
 * "Running" long past every call timeout was sent but never recorded: it becomes Unknown and is not
 * sent again. A run whose host went silent (the tab closed, the process died) is continued by the
 * server runner through replay. A waiting run whose decision is gone ends as Interrupted. Reading a
 * run never does any of this.
 */
export async function sweepRuns(
  platform: Platform,
  now = Date.now(),
): Promise<{ resumed: string[]; interrupted: string[] }> {
  const { db } = platform;
  await db.query("update app_operations set status = 'Unknown' where status = 'Running' and started_at < $1", [
    now - STALE_GRACE_MS - 60_000,
  ]);
  // Open questions live with the App connection; one older than any answer window (10 min) is gone.
  await db.query(
    "update app_operations set status = 'Failed', error_reason = 'input_expired', finished_at = $2 where status = 'InputRequired' and started_at < $1",
    [now - 10 * 60_000 - STALE_GRACE_MS, now],
  );
  const resumed: string[] = [];
  const interrupted: string[] = [];
  const stale = await db.query<RunRow>(
    `select * from code_runs r where r.status in ('Running', 'Queued') and r.updated_at < $1
     and not exists (select 1 from app_operations o where o.run_id = r.id and o.status = 'Running')`,
    [now - STALE_GRACE_MS],
  );
  for (const run of stale) {
    if (platform.activeRuns.has(run.id)) continue;
    const limits = JSON.parse(run.limits) as EngineLimits;
    if (Number(run.updated_at) > now - STALE_GRACE_MS - limits.timeoutMs) continue;
    resumed.push(run.id);
    platform.track(resumeRun(platform, run.id, { status: "Running", attempt: run.attempt }));
  }
  const orphans = await db.query<{ id: string }>(
    `select r.id from code_runs r where r.status = 'Waiting'
     and not exists (select 1 from decisions d where d.run_id = r.id and d.status in ('pending', 'allowed', 'denied'))`,
  );
  for (const { id } of orphans) {
    interrupted.push(id);
    await failRun({ platform, principal: null }, id, "Interrupted", "The run waited for a step that is gone.", []);
  }
  // Decided, but the re-run never started (the process stopped between the answer and the re-run).
  const decided = await db.query<{ id: string }>(
    `select r.id from code_runs r where r.status = 'Waiting' and r.updated_at < $1
     and not exists (select 1 from decisions d where d.run_id = r.id and d.status = 'pending')`,
    [now - STALE_GRACE_MS],
  );
  for (const { id } of decided) {
    if (interrupted.includes(id)) continue;
    resumed.push(id);
    platform.track(resumeRun(platform, id));
  }
  return { resumed, interrupted };
}

async function loadRun(ctx: ServiceContext, runId: string): Promise<RunRow> {
  const rows = await ctx.platform.db.query<RunRow>("select * from code_runs where id = $1", [runId]);
  if (!rows[0]) throw new AppError("NOT_FOUND", "No such code run.");
  return rows[0];
}

/** The run if the caller may act on it: apps.use and the right to run programs in its chat now. */
async function runForHost(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
): Promise<{ run: RunRow; principal: Principal }> {
  const principal = requirePermission(ctx.principal, "apps.use");
  const run = await loadRun(ctx, runId);
  await ownedChat(ctx.platform.db, principal, run.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such code run.");
  });
  if (run.attempt !== attempt)
    throw new AppError("CONFLICT", `This is attempt ${attempt}; the run is at attempt ${run.attempt}.`);
  return { run, principal };
}

/** The recorded outcomes of a run and the order they completed in: what a re-run replays. */
export async function replayLog(ctx: ServiceContext, runId: string): Promise<RunTicket["input"]["replay"]> {
  const rows = await ctx.platform.db.query<CallRow>(
    "select * from code_run_calls where run_id = $1 and outcome_enc is not null order by idx",
    [runId],
  );
  if (rows.length === 0) return undefined;
  const calls: RecordedCall[] = rows.map((r) => ({
    index: r.idx,
    binding: r.binding,
    argsJson: open<string>(ctx, "code_run_calls", `${runId}:${r.idx}`, "args", r.args_enc),
    outcome: open<CallOutcome>(ctx, "code_run_calls", `${runId}:${r.idx}`, "outcome", r.outcome_enc!),
  }));
  const completionOrder = [...rows].sort((a, b) => (a.completed_seq ?? 0) - (b.completed_seq ?? 0)).map((r) => r.idx);
  return { calls, completionOrder };
}

/**
 * One nested call of a running program. The answer is the call's outcome (sent now or replayed from
 * the record), a pause for a decision, or a stop.
 */
export async function handleCall(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  call: CallRequest,
): Promise<HostCallAnswer> {
  const { run, principal } = await runForHost(ctx, runId, attempt);
  if (run.status !== "Running" && run.status !== "Waiting") {
    return { type: "stop", reason: "Cancelled", message: `The run is ${run.status}, not running.` };
  }
  if (call.argsJson.length > MAX_ARGS_JSON) {
    return failedOutcome("invalid_arguments", `The arguments are larger than ${MAX_ARGS_JSON} bytes.`);
  }
  let argsJson: string;
  try {
    argsJson = canonicalJson(call.argsJson);
  } catch (error) {
    if (error instanceof RangeError) {
      return failedOutcome(
        "invalid_arguments",
        `The arguments are nested deeper than ${CANONICAL_MAX_DEPTH} levels, the most a call can carry.`,
      );
    }
    return failedOutcome("invalid_arguments", "The arguments are not JSON.");
  }
  const digest = sha256(`${call.binding}\n${argsJson}`);
  const { db } = ctx.platform;
  const existing = (
    await db.query<CallRow>("select * from code_run_calls where run_id = $1 and idx = $2", [runId, call.index])
  )[0];
  if (existing) return answerRecordedCall(ctx, run, principal, existing, call, digest, argsJson);
  if (isDiscoveryBinding(call.binding)) return answerDiscoveryCall(ctx, run, call, argsJson, digest);

  const bindings = JSON.parse(run.bindings) as string[];
  const entry = bindings.includes(call.binding) ? ctx.platform.apps.resolve(call.binding) : undefined;
  const source = entry
    ? { connectionId: entry.connectionId, connectionName: entry.connectionName, name: entry.name }
    : { connectionId: "", connectionName: "", name: call.binding };
  const rowId = `${runId}:${call.index}`;
  const inserted = await db.query(
    `insert into code_run_calls (run_id, idx, binding, source, args_enc, args_digest, created_at)
     values ($1, $2, $3, $4, $5, $6, $7) on conflict (run_id, idx) do nothing returning idx`,
    [
      runId,
      call.index,
      call.binding,
      JSON.stringify(source),
      seal(ctx, "code_run_calls", rowId, "args", argsJson),
      digest,
      Date.now(),
    ],
  );
  if (inserted.length === 0) {
    // The same call arrived twice at once (a re-send): the first one owns it.
    const first = (
      await db.query<CallRow>("select * from code_run_calls where run_id = $1 and idx = $2", [runId, call.index])
    )[0]!;
    return answerRecordedCall(ctx, run, principal, first, call, digest, argsJson);
  }
  if (!entry) {
    return recordOutcome(
      ctx,
      runId,
      call.index,
      failedOutcome("unavailable", `${call.binding} is not available now.`),
      {
        name: "AppCallFailed",
        message: `${call.binding} is not available now.`,
      },
    );
  }
  const verdict = checkAppCall(principal, entry, argsJson);
  if (verdict.verdict === "deny") {
    const outcome: CallOutcome = {
      type: "error",
      name: "AppCallDenied",
      message: verdict.message,
      details: { binding: call.binding },
    };
    return recordOutcome(ctx, runId, call.index, outcome, { name: "AppCallDenied", message: verdict.message });
  }
  const refusal = await vaultRefusal(ctx.platform, argsJson, entry, principal);
  if (refusal) {
    const outcome: CallOutcome = {
      type: "error",
      name: "VaultDenied",
      message: `${refusal} Nothing was sent.`,
      details: { binding: call.binding },
    };
    return recordOutcome(ctx, runId, call.index, outcome, { name: "VaultDenied", message: refusal });
  }
  if (verdict.verdict === "ask") {
    await requestDecision(ctx, run, call.index, entry, argsJson, verdict.capability);
    return { type: "pause" };
  }
  return sendCall(ctx, run, call.index, entry, argsJson);
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
  digest: string,
): Promise<HostCallAnswer> {
  const inserted = await ctx.platform.db.query(
    `insert into code_run_calls (run_id, idx, binding, source, args_enc, args_digest, created_at)
     values ($1, $2, $3, $4, $5, $6, $7) on conflict (run_id, idx) do nothing returning idx`,
    [
      run.id,
      call.index,
      call.binding,
      JSON.stringify({ connectionId: "", connectionName: "", name: call.binding }),
      seal(ctx, "code_run_calls", `${run.id}:${call.index}`, "args", argsJson),
      digest,
      Date.now(),
    ],
  );
  if (inserted.length === 0) return { type: "stop", reason: "Unavailable", message: "The call arrived twice." };
  const catalog = (JSON.parse(run.bindings) as string[]).flatMap((b) => {
    const entry = ctx.platform.apps.resolve(b);
    return entry && entry.policy !== "deny" ? [entry] : [];
  });
  const outcome = await discoveryOutcome(call.binding, argsJson, catalog);
  return recordOutcome(ctx, run.id, call.index, outcome, null);
}

/**
 * A call the record already has at this index: it must be the same call (else ReplayMismatch, nothing
 * sent). Its stored outcome is returned without contacting the App; a decided call is sent now (once);
 * a call still waiting for its decision pauses again; a call sent without a recorded outcome is never
 * sent again blindly.
 */
async function answerRecordedCall(
  ctx: ServiceContext,
  run: RunRow,
  principal: Principal,
  existing: CallRow,
  call: CallRequest,
  digest: string,
  argsJson: string,
): Promise<HostCallAnswer> {
  if (existing.args_digest !== digest) {
    const message = `Call ${call.index} is ${call.binding} with other arguments than the recorded ${existing.binding} call; nothing was sent.`;
    await failRun(ctx, run.id, "ReplayMismatch", message, []);
    return { type: "stop", reason: "ReplayMismatch", message };
  }
  if (existing.outcome_enc)
    return open<CallOutcome>(ctx, "code_run_calls", `${run.id}:${call.index}`, "outcome", existing.outcome_enc);
  if (existing.operation_id) {
    return {
      type: "stop",
      reason: "Unavailable",
      message: `Call ${call.index} (${call.binding}) was sent, but its outcome is unknown; it was not sent again.`,
    };
  }
  if (existing.decision_id) {
    const decision = (
      await ctx.platform.db.query<{ status: string }>("select status from decisions where id = $1", [
        existing.decision_id,
      ])
    )[0];
    if (decision?.status === "pending") return { type: "pause" };
    if (decision?.status === "allowed") {
      const entry = ctx.platform.apps.resolve(call.binding);
      const source = JSON.parse(existing.source) as CodeRunCallView["source"];
      if (!entry || entry.connectionId !== source.connectionId || entry.name !== source.name) {
        const message = `${call.binding} changed while the run waited; nothing was sent.`;
        await failRun(ctx, run.id, "ReplayMismatch", message, []);
        return { type: "stop", reason: "ReplayMismatch", message };
      }
      if (!principal.permissions.has("apps.use"))
        return { type: "stop", reason: "Cancelled", message: "The caller lost apps.use." };
      return sendCall(ctx, run, call.index, entry, argsJson);
    }
  }
  return { type: "stop", reason: "Unavailable", message: `Call ${call.index} has no stored outcome.` };
}

/** Stores a decision request shaped as in the seeds and marks the run Waiting. */
async function requestDecision(
  ctx: ServiceContext,
  run: RunRow,
  index: number,
  entry: ToolEntry,
  argsJson: string,
  capability: { action: "apps.call"; target: string },
): Promise<string> {
  const id = `dec_${randomUUID()}`;
  const code = open<string>(ctx, "code_runs", run.id, "code", run.code_enc);
  const toolCallId = run.call_id ?? run.id;
  const request = {
    capability,
    toolCallId,
    app: {
      id: entry.connectionId,
      callId: `${toolCallId}:${index}`,
      binding: entry.binding,
      tool: entry.name,
      arguments: JSON.parse(argsJson) as unknown,
    },
    code: { run: run.id, index, code },
  };
  const now = Date.now();
  await ctx.platform.db.query(
    "insert into decisions (id, chat_id, run_id, call_index, status, request_enc, created_at) values ($1, $2, $3, $4, 'pending', $5, $6)",
    [id, run.chat_id, run.id, index, seal(ctx, "decisions", id, "request", request), now],
  );
  await ctx.platform.db.query("update code_run_calls set decision_id = $1 where run_id = $2 and idx = $3", [
    id,
    run.id,
    index,
  ]);
  await ctx.platform.db.query(
    "update code_runs set status = 'Waiting', updated_at = $1 where id = $2 and status in ('Running', 'Waiting')",
    [now, run.id],
  );
  ctx.platform.events.emit("run", { runId: run.id, chatId: run.chat_id });
  return id;
}

/** An unexpected App failure as it may be logged: the same name, message and stack with every secret hidden. */
function redactError(error: unknown, secrets: Substituted["secrets"]): Error {
  const e = error instanceof Error ? error : new Error(String(error));
  const safe = new Error(redact(e.message, secrets));
  safe.name = e.name;
  safe.stack = e.stack === undefined ? undefined : redact(e.stack, secrets);
  return safe;
}

function failedOutcome(reason: string, message: string): CallOutcome {
  return { type: "error", name: "AppCallFailed", message, details: { reason } };
}

/** Sends an allowed call to its App (from a program), recording the App operation before and after. */
async function sendCall(
  ctx: ServiceContext,
  run: RunRow,
  index: number,
  entry: ToolEntry,
  argsJson: string,
): Promise<CallOutcome> {
  const { outcome } = await performAppCall(ctx.platform, {
    chatId: run.chat_id,
    runId: run.id,
    index,
    entry,
    argsJson,
    principal: requirePermission(ctx.principal, "apps.use"),
  });
  return recordOutcome(ctx, run.id, index, outcome, null);
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
  await db.query(
    `insert into app_operations (id, execution_id, chat_id, run_id, call_index, connection_id, tool, status, args_enc, started_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'Running', $8, $9)`,
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
  if (call.runId !== null) {
    await db.query("update code_run_calls set operation_id = $1 where run_id = $2 and idx = $3", [
      opId,
      call.runId,
      call.index,
    ]);
  }
  let outcome: CallOutcome;
  let stored: unknown;
  let status: "Completed" | "Failed";
  let errorReason: string | null = null;
  const secrets = [...substituted.secrets, ...(await knownSecrets(platform))];
  try {
    const progress = progressRecorder(platform, opId, call, (text) => redact(text, secrets));
    const tracked = trackRunCall(platform, call.runId);
    const result = redact(
      await platform.apps
        .call(call.entry, substituted.args, { onProgress: progress.onProgress, signal: tracked.signal })
        .finally(() => {
          tracked.done();
          return progress.flush();
        }),
      secrets,
    );
    const resultJson = JSON.stringify(result);
    if (resultJson.length > MAX_CALL_JSON)
      throw new AppCallError("tool_error", `The result is larger than ${MAX_CALL_JSON} bytes.`);
    outcome = { type: "ok", resultJson };
    stored = result;
    status = "Completed";
  } catch (error: unknown) {
    // The registry lives in another module graph in the build: its errors are told apart by their tag.
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

/** Stores a call's outcome with its place in the completion order. */
export async function recordOutcome(
  ctx: ServiceContext,
  runId: string,
  index: number,
  outcome: CallOutcome,
  rejection: { name: string; message: string } | null,
): Promise<CallOutcome> {
  const { db } = ctx.platform;
  const [seq] = await db.query<{ completions: number }>(
    "update code_runs set completions = completions + 1, updated_at = $2 where id = $1 returning completions",
    [runId, Date.now()],
  );
  await db.query(
    "update code_run_calls set outcome_enc = $1, completed_seq = $2, rejection = $3 where run_id = $4 and idx = $5",
    [
      seal(ctx, "code_run_calls", `${runId}:${index}`, "outcome", outcome),
      seq?.completions ?? 0,
      rejection ? JSON.stringify(rejection) : null,
      runId,
      index,
    ],
  );
  ctx.platform.events.emit("run", { runId });
  return outcome;
}

/** Stores the end of an attempt as its host reports it. */
export async function finishRun(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  outcome: RunOutcome & { completionOrder?: number[] },
): Promise<CodeRunRecord> {
  const { run } = await runForHost(ctx, runId, attempt);
  await checkOutcomeBounds(ctx, run, outcome);
  if (outcome.completionOrder?.length) await storeCompletionOrder(ctx, runId, outcome.completionOrder);
  if (run.status !== "Running") return getRun(ctx, runId);
  if (outcome.status === "completed") {
    const limits = JSON.parse(run.limits) as EngineLimits;
    if (new TextEncoder().encode(outcome.valueJson).length > limits.outputBytes) {
      await failRun(
        ctx,
        runId,
        "OutputTooLarge",
        `The value is larger than outputBytes (${limits.outputBytes}).`,
        outcome.logs,
      );
    } else {
      const value: unknown =
        outcome.valueJson === undefined || outcome.valueJson === "" ? null : JSON.parse(outcome.valueJson);
      const result: CodeRunResult = { _tag: "Completed", value, logs: outcome.logs, output: outcome.output };
      await ctx.platform.db.query(
        "update code_runs set status = 'Completed', result_enc = $1, updated_at = $2 where id = $3 and status = 'Running'",
        [seal(ctx, "code_runs", runId, "result", result), Date.now(), runId],
      );
      cancelRunCalls(ctx.platform, runId);
      reportLater(ctx.platform, runId);
    }
  } else if (outcome.status === "failed") {
    await failRun(ctx, runId, outcome.reason, outcome.message, outcome.logs);
  } else {
    await ctx.platform.db.query(
      "update code_runs set status = 'Waiting', updated_at = $1 where id = $2 and status = 'Running'",
      [Date.now(), runId],
    );
  }
  ctx.platform.events.emit("run", { runId });
  return getRun(ctx, runId);
}

/** A run ended: subscribers (the agent posts it into the chat when its turn moved on) take it from here. */
function reportLater(platform: Platform, runId: string): void {
  platform.events.emit("run-settled", { runId });
}

/** Room for the engine's "[log output truncated …]" line beyond outputBytes. */
const LOG_NOTE_BYTES = 256;

/**
 * What a host reports can be no bigger than what this run can have: no more completions than its
 * calls, logs and output within its own outputBytes (each line or item counts at least one byte, as the
 * engine counts them). A host that sends more is refused before anything is stored.
 */
async function checkOutcomeBounds(
  ctx: ServiceContext,
  run: RunRow,
  outcome: RunOutcome & { completionOrder?: number[] },
): Promise<void> {
  const { outputBytes } = JSON.parse(run.limits) as EngineLimits;
  const refuse = (field: string, message: string): never => {
    throw new AppError("BAD_REQUEST", `outcome.${field}: ${message}`, {
      fields: [{ field: `outcome.${field}`, message }],
    });
  };
  const order = outcome.completionOrder ?? [];
  if (order.length > 0) {
    const [row] = await ctx.platform.db.query<{ n: string | number }>(
      "select count(*) as n from code_run_calls where run_id = $1",
      [run.id],
    );
    const calls = Number(row?.n ?? 0);
    if (order.length > calls) refuse("completionOrder", `has ${order.length} entries, but the run made ${calls} calls`);
  }
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
 */
async function storeCompletionOrder(ctx: ServiceContext, runId: string, order: number[]): Promise<void> {
  const indexes = [...new Set(order)];
  const seqs = indexes.map((_, i) => i + 1);
  await ctx.platform.db.query(
    `update code_run_calls c set completed_seq = o.seq
     from unnest($2::int[], $3::int[]) as o(idx, seq)
     where c.run_id = $1 and c.idx = o.idx and c.outcome_enc is not null`,
    [runId, indexes, seqs],
  );
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
     where id = $6 and status in ('Queued', 'Running', 'Waiting')`,
    [status, reason, errorId, seal(ctx, "code_runs", runId, "result", result), Date.now(), runId],
  );
  cancelRunCalls(ctx.platform, runId);
  reportLater(ctx.platform, runId);
}

/**
 * A host takes an attempt: only one (a page's worker, or the server when no page does) runs it.
 * Returns false when another host already claimed it.
 */
export async function claimRun(platform: Platform, runId: string, attempt: number): Promise<boolean> {
  const rows = await platform.db.query(
    "update code_runs set claimed_at = $3, updated_at = $3 where id = $1 and attempt = $2 and claimed_at is null and status = 'Running' returning id",
    [runId, attempt, Date.now()],
  );
  return rows.length > 0;
}

/** A page claims a turn's program to run it in its worker; null when another host already has it. */
export async function claimForPage(ctx: ServiceContext, runId: string, attempt: number): Promise<RunTicket | null> {
  const { run } = await runForHost(ctx, runId, attempt);
  if (!(await claimRun(ctx.platform, runId, attempt))) return null;
  ctx.platform.events.emit("run", { runId, chatId: run.chat_id });
  return ticketFor(ctx, { ...run, claimed_at: Date.now() } as RunRow);
}

/**
 * Runs a program on the server's runner (no browser) and answers with its record. The runner's slot is
 * asked for before the run is created, so a refusal (the person's queue is full) leaves no run behind.
 */
export async function runOnServer(
  ctx: ServiceContext,
  input: unknown,
  options: { onStarted?: (runId: string) => Promise<void> } = {},
): Promise<CodeRunRecord> {
  const p = requirePermission(ctx.principal, "apps.use");
  const pass = await requestPass(ctx.platform, p.userId, true);
  let handedOver = false;
  try {
    const { ticket, record } = await startRun(ctx, input, "server");
    await options.onStarted?.(record.id);
    if (!ticket) return record;
    handedOver = true;
    return await runTicketOnServer(ctx, ticket, pass);
  } finally {
    if (!handedOver) pass.release();
  }
}

/**
 * A slot in the server runner under the current settings (run-admission.ts). With `bounded`, a full
 * queue is TOO_MANY_REQUESTS (429), made here from the admission's data.
 */
async function requestPass(platform: Platform, userId: string, bounded: boolean): Promise<RunPass> {
  const { codeMode } = await readSettings(platform.db);
  const answer = platform.admission.request(userId, codeMode, { bounded });
  if (answer.refused) throw new AppError("TOO_MANY_REQUESTS", answer.message, answer.details);
  return answer;
}

/**
 * Runs one attempt on the server runner once admission lets it: until then the run is `Queued`. Every
 * server-side start passes here (API runs, turns without a page, re-runs after a decision, takeovers).
 * `admission`: a pass already taken; "bounded" (a person's request: a full queue fails the run with the
 * refusal's message); "queue" (background work the server owes: always queues).
 */
export async function runTicketOnServer(
  ctx: ServiceContext,
  ticket: RunTicket,
  admission: RunPass | "bounded" | "queue" = "queue",
): Promise<CodeRunRecord> {
  const controller = new AbortController();
  ctx.platform.activeRuns.set(ticket.runId, controller);
  let held: RunPass | undefined = typeof admission === "object" ? admission : undefined;
  const leaveQueue = () => held?.release();
  controller.signal.addEventListener("abort", leaveQueue, { once: true });
  try {
    if (!held) {
      try {
        held = await requestPass(ctx.platform, ctx.principal?.userId ?? "", admission === "bounded");
      } catch (error) {
        if ((error as { code?: unknown }).code !== "TOO_MANY_REQUESTS") throw error;
        await failRun(ctx, ticket.runId, "Unavailable", (error as Error).message, []);
        return await getRun(ctx, ticket.runId);
      }
    }
    if (!held.immediate) {
      const { db, events } = ctx.platform;
      await db.query("update code_runs set status = 'Queued' where id = $1 and status = 'Running' and attempt = $2", [
        ticket.runId,
        ticket.attempt,
      ]);
      events.emit("run", { runId: ticket.runId });
      if (controller.signal.aborted || !(await held.admitted)) return await getRun(ctx, ticket.runId);
      // Still this attempt and still queued (not cancelled, not taken over by another instance).
      const rows = await db.query(
        "update code_runs set status = 'Running', updated_at = $2 where id = $1 and status = 'Queued' and attempt = $3 returning id",
        [ticket.runId, Date.now(), ticket.attempt],
      );
      if (!rows.length) return await getRun(ctx, ticket.runId);
      events.emit("run", { runId: ticket.runId });
    }
    controller.signal.removeEventListener("abort", leaveQueue);
    const outcome = await ctx.platform.runner.run(ticket.input, {
      call: (req) =>
        handleCall(ctx, ticket.runId, ticket.attempt, req).catch((error: unknown): HostCallAnswer => {
          logFailure("code_run_call_failed", error, { runId: ticket.runId, index: req.index });
          return { type: "stop", reason: "Unavailable", message: "OpenBot could not store this call." };
        }),
      onLog: (line) => ctx.platform.events.emit("run-log", { runId: ticket.runId, line }),
      signal: controller.signal,
    });
    try {
      return await finishRun(ctx, ticket.runId, ticket.attempt, outcome);
    } catch (error) {
      // The runner's own report out of bounds is a bug, but the run must still end.
      if ((error as { code?: unknown }).code !== "BAD_REQUEST") throw error;
      await failRun(
        ctx,
        ticket.runId,
        "Unavailable",
        `The runner's report was refused: ${(error as Error).message}`,
        [],
      );
      return await getRun(ctx, ticket.runId);
    }
  } finally {
    controller.signal.removeEventListener("abort", leaveQueue);
    held?.release();
    ctx.platform.activeRuns.delete(ticket.runId);
  }
}

export async function cancelRun(ctx: ServiceContext, runId: string): Promise<CodeRunRecord> {
  const principal = requirePermission(ctx.principal, "apps.use");
  const run = await loadRun(ctx, runId);
  await ownedChat(ctx.platform.db, principal, run.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such code run.");
  });
  ctx.platform.activeRuns.get(runId)?.abort();
  await failRun(ctx, runId, "Cancelled", "The program was stopped.", []);
  await ctx.platform.db.query(
    "update decisions set status = 'withdrawn', decided_at = $2 where run_id = $1 and status = 'pending'",
    [runId, Date.now()],
  );
  logEvent("code_run_cancelled", { runId });
  return getRun(ctx, runId);
}

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
  const calls = await db.query<CallRow>("select * from code_run_calls where run_id = $1 order by idx", [run.id]);
  const ops = await db.query<OperationRow>(
    "select id, execution_id, status, result_enc, progress_enc, started_at, finished_at from app_operations where run_id = $1",
    [run.id],
  );
  const opById = new Map(ops.map((o) => [o.id, o]));
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
      const op = c.operation_id ? opById.get(c.operation_id) : undefined;
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
              result: op.result_enc ? open<unknown>(ctx, "app_operations", op.id, "result", op.result_enc) : null,
              progress: op.progress_enc
                ? open<NonNullable<AppOperationView["progress"]>>(
                    ctx,
                    "app_operations",
                    op.id,
                    "progress",
                    op.progress_enc,
                  )
                : null,
              startedAt: Number(op.started_at),
              finishedAt: op.finished_at === null ? null : Number(op.finished_at),
            }
          : null,
        rejection: c.rejection ? (JSON.parse(c.rejection) as { name: string; message: string }) : null,
      };
    }),
    result: run.result_enc ? open<CodeRunResult>(ctx, "code_runs", run.id, "result", run.result_enc) : null,
    createdAt: Number(run.created_at),
    updatedAt: Number(run.updated_at),
  };
}
