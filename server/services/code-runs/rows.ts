/**
 * The stored shape of runs and their calls, and the two reads every part of the journal starts from.
 * Code, arguments, results and logs are stored encrypted: `seal`/`open` bind each value to its row and column.
 */
import "server-only";
import type { AppOperationView, CodeRunStatus } from "@/contracts/code-run";
import type { FailureReason } from "@/contracts/engine";
import type { UnknownState } from "@/contracts/reconcile";
import { type Principal, requirePermission } from "../auth";
import { ownedChat } from "../chats";
import type { ServiceContext } from "../context";
import { AppError } from "../errors";

export interface RunRow {
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

/** What is kept of an App's task on its operation (sealed in `task_enc`; code-runs/tasks.ts). */
export interface StoredTask {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  statusMessage: string | null;
}

export interface CallRow {
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
  grant_id?: string | null;
  unknown_state?: UnknownState | null;
  unknown_by?: string | null;
  unknown_at?: string | number | null;
  created_at: string | number;
}

export interface OperationRow {
  id: string;
  execution_id: string;
  status: AppOperationView["status"];
  result_enc: string | null;
  progress_enc: string | null;
  task_enc?: string | null;
  started_at: string | number;
  finished_at: string | number | null;
}

export const seal = (ctx: ServiceContext, table: string, id: string, column: string, value: unknown) =>
  ctx.platform.seal(`${table}:${id}:${column}`, JSON.stringify(value));
export const open = <T>(ctx: ServiceContext, table: string, id: string, column: string, value: string): T =>
  JSON.parse(ctx.platform.open(`${table}:${id}:${column}`, value)) as T;

export async function loadRun(ctx: ServiceContext, runId: string): Promise<RunRow> {
  const rows = await ctx.platform.db.query<RunRow>("select * from code_runs where id = $1", [runId]);
  if (!rows[0]) throw new AppError("NOT_FOUND", "No such code run.");
  return rows[0];
}

/**
 * Runs whose host passed `runForHost` lately, by platform, then `runId:attempt:userId:keyId:role`: a nested call
 * reads the run's fixed fields (chat, code, bindings) and the chat's ownership from here instead of two
 * statements per call. Its status and attempt are not taken from here: `decideCall` checks them in the
 * statement that records the call. Entries live HOST_CHECK_TTL_MS, so a lost right ends within that, and
 * each new entry first drops the expired ones at the front (entries always go in at the back, so the map is
 * in about the order they expire). An entry holds the row itself once its check has answered, not the
 * promise: a promise made while a request is handled carries that request's async context (Next's request
 * store, its response), and 10,000 expired entries holding theirs kept ~300 MB of finished requests alive.
 */
const HOST_CHECK_TTL_MS = 5_000;

interface HostCheck {
  /** The check on its way, then its row. */
  run: Promise<RunRow> | RunRow;
  until: number;
}

const hostChecks = new WeakMap<ServiceContext["platform"], Map<string, HostCheck>>();

function checksOf(platform: ServiceContext["platform"]): Map<string, HostCheck> {
  let checks = hostChecks.get(platform);
  if (!checks) {
    checks = new Map();
    hostChecks.set(platform, checks);
  }
  return checks;
}

/** Drops the expired entries at the front, then adds `entry` at the back. */
function remember(checks: Map<string, HostCheck>, key: string, entry: HostCheck, now: number): void {
  for (const [k, v] of checks) {
    if (v.until > now) break;
    checks.delete(k);
  }
  checks.delete(key);
  checks.set(key, entry);
}

/** Host checks remembered now on `platform`, expired ones not yet dropped included (tests). */
export function hostCheckCount(platform: ServiceContext["platform"]): number {
  return checksOf(platform).size;
}

// By key too: two keys of one person may hold different permissions.
const checkKey = (runId: string, attempt: number, principal: Principal) =>
  `${runId}:${attempt}:${principal.userId}:${principal.keyId ?? ""}:${principal.role}`;

/**
 * `runForHost` for a nested call: the same check, remembered for a few seconds (see hostChecks); calls
 * arriving together (Promise.all) share one check.
 */
export async function runForCall(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
): Promise<{ run: RunRow; principal: Principal }> {
  const principal = requirePermission(ctx.principal, "apps.use");
  const checks = checksOf(ctx.platform);
  const key = checkKey(runId, attempt, principal);
  const now = Date.now();
  const known = checks.get(key);
  if (known && known.until > now) return { run: await known.run, principal };
  const run = runForHost(ctx, runId, attempt).then((checked) => checked.run);
  const entry: HostCheck = { run, until: now + HOST_CHECK_TTL_MS };
  remember(checks, key, entry, now);
  run.then(
    (row) => {
      entry.run = row;
    },
    // A refused check is not remembered: the next call asks again (and gets the same refusal, or not).
    () => {
      if (checks.get(key) === entry) checks.delete(key);
    },
  );
  return { run: await run, principal };
}

/**
 * The check `runForCall` would make, as this process's start of the run (runs.ts) already made it for
 * `ctx`'s caller at `checkedAt` (apps.use, the chat's ownership) with `run` the row it wrote for this
 * attempt, now Running: the first call reads neither the run nor its chat again. It is remembered until
 * HOST_CHECK_TTL_MS after `checkedAt`, as a call's own check would be.
 */
export function seedHostCheck(ctx: ServiceContext, run: RunRow, checkedAt: number): void {
  const principal = requirePermission(ctx.principal, "apps.use");
  const now = Date.now();
  if (checkedAt + HOST_CHECK_TTL_MS <= now) return;
  remember(
    checksOf(ctx.platform),
    checkKey(run.id, run.attempt, principal),
    { run, until: checkedAt + HOST_CHECK_TTL_MS },
    now,
  );
}

/**
 * The run if the caller may host it: apps.use, the right to run programs in its chat now, and being the
 * person who started it. A run's calls go out as its host (vault rights, per-person App sign-ins), so an
 * admin who opens a member's chat must not take up the member's programs as the admin (nor a member an
 * admin's); the server runner acts as the run's creator (resumeRun).
 */
export async function runForHost(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
): Promise<{ run: RunRow; principal: Principal }> {
  const principal = requirePermission(ctx.principal, "apps.use");
  const run = await loadRun(ctx, runId);
  await ownedChat(ctx.platform.db, principal, run.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such code run.");
  });
  if (run.created_by !== principal.userId)
    throw new AppError("FORBIDDEN", "Only the person who started this code run can run it.");
  if (run.attempt !== attempt)
    throw new AppError("CONFLICT", `This is attempt ${attempt}; the run is at attempt ${run.attempt}.`);
  return { run, principal };
}
