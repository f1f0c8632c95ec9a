/**
 * A program's call that its App runs as a task (MCP Tasks, server/apps/tasks.ts). The gateway parked it
 * (app-calls.ts: the operation is `Task`, no outcome) and the run went Waiting without a worker or a model
 * turn; from then on the durable job `poll-task` asks the App (`tasks/get`) with backoff, from whichever
 * instance takes it (a restart continues it):
 * - still working: the status and its message are stored on the operation (the run card shows them) and
 *   the next poll is scheduled, after the App's poll interval doubling up to 30 s (back to the interval
 *   whenever the status changes);
 * - completed: the result is redacted against the vault like every App answer, becomes the call's
 *   outcome, and the program runs again (`resume-run`), which replays it without sending anything;
 * - failed or cancelled: the call's outcome is AppCallFailed (`tool_error` / `cancelled`);
 * - input_required: the operation becomes InputRequired with the App's question, the same card as an
 *   elicitation; the answer goes to the task with `tasks/update` (app-operations.ts) and polling goes on.
 * When the run ends while a task is out (cancelled, failed, or returned without it), the job
 * `cancel-task` sends `tasks/cancel`, durably, and the polling stops.
 */
import "server-only";
import type { CallOutcome } from "@/contracts/engine";
import { isAppCallError, type TaskState, taskAnswerProblem } from "../../apps/registry";
import { logEvent } from "../../log";
import type { Platform } from "../../platform";
import { failedOutcome } from "../app-calls";
import { AppError } from "../errors";
import { knownSecrets, redact } from "../vault";
import type { StoredTask } from "./rows";

export const POLL_TASK = "poll-task";
export const CANCEL_TASK = "cancel-task";
const MAX_DELAY_MS = 30_000;
const MIN_DELAY_MS = 100;
/** Polls that failed in a row (the App unreachable, the task unknown to it) before the call fails. */
const MAX_FAILED_POLLS = 20;
const MAX_RESULT_JSON = 8 * 1024 * 1024;

interface PollPayload {
  operationId: string;
  polls: number;
  failures?: number;
}

interface TaskOpRow {
  id: string;
  run_id: string | null;
  chat_id: string | null;
  call_index: number | null;
  connection_id: string;
  status: string;
  task_enc: string | null;
  run_status: string | null;
  created_by: string | null;
}

async function loadTaskOp(platform: Platform, operationId: string): Promise<TaskOpRow | undefined> {
  const rows = await platform.db.query<TaskOpRow>(
    `select o.id, o.run_id, o.chat_id, o.call_index, o.connection_id, o.status, o.task_enc,
            r.status as run_status, r.created_by
     from app_operations o left join code_runs r on r.id = o.run_id where o.id = $1`,
    [operationId],
  );
  return rows[0];
}

const openTask = (platform: Platform, op: TaskOpRow): StoredTask | undefined =>
  op.task_enc ? (JSON.parse(platform.open(`app_operations:${op.id}:task`, op.task_enc)) as StoredTask) : undefined;

const sealTask = (platform: Platform, opId: string, task: StoredTask) =>
  platform.seal(`app_operations:${opId}:task`, JSON.stringify(task));

/** The `poll-task` job: one look at the task, then the next poll or the call's outcome. */
export async function pollTask(platform: Platform, payload: PollPayload): Promise<void> {
  const op = await loadTaskOp(platform, payload.operationId);
  if (op?.status !== "Task" || !op.run_id || op.call_index === null) return;
  const stored = openTask(platform, op);
  if (!stored) return;
  // The run ended while the task was out: cancel-task stops it at the App; nothing is polled any more.
  if (op.run_status !== "Running" && op.run_status !== "Waiting" && op.run_status !== "Queued") {
    await enqueueCancel(platform, op.id);
    return;
  }
  let task: TaskState | undefined;
  try {
    task = await platform.apps.task(
      op.connection_id,
      stored.taskId,
      { type: "get" },
      { userId: op.created_by ?? undefined },
    );
  } catch (error) {
    const failures = (payload.failures ?? 0) + 1;
    const reason = isAppCallError(error) ? error.reason : "unavailable";
    logEvent("app_task_poll_failed", { operationId: op.id, reason, failures });
    if (failures >= MAX_FAILED_POLLS) {
      const secrets = await knownSecrets(platform);
      const message = redact(isAppCallError(error) ? error.message : "The App could not be reached.", secrets);
      await settleTaskCall(platform, op, { ...stored, status: "failed" }, failedOutcome(reason, message), reason);
      return;
    }
    await schedulePoll(platform, op.id, payload.polls + 1, backoff(1_000, payload.polls), failures);
    return;
  }
  if (!task) return;
  const secrets = await knownSecrets(platform);
  const statusMessage = task.statusMessage === undefined ? null : redact(task.statusMessage, secrets);
  const next: StoredTask = { taskId: stored.taskId, status: task.status, statusMessage };
  if (task.status === "working") {
    const changed = next.status !== stored.status || next.statusMessage !== stored.statusMessage;
    if (changed) await storeTask(platform, op, next);
    const polls = changed ? 0 : payload.polls + 1;
    await schedulePoll(platform, op.id, polls, backoff(task.pollIntervalMs ?? 1_000, polls));
    return;
  }
  if (task.status === "input_required") {
    await askForTask(platform, op, next, task, secrets);
    return;
  }
  if (task.status === "completed") {
    const result = redact(task.result ?? { content: [] }, secrets);
    const resultJson = JSON.stringify(result);
    if (resultJson.length > MAX_RESULT_JSON) {
      const outcome = failedOutcome("tool_error", `The result is larger than ${MAX_RESULT_JSON} bytes.`);
      await settleTaskCall(platform, op, next, outcome, "tool_error");
      return;
    }
    if ((result as { isError?: unknown }).isError === true) {
      const first = ((result as { content?: { type?: string; text?: string }[] }).content ?? []).find(
        (c) => c?.type === "text",
      );
      const text = first?.text ? `: ${String(first.text).slice(0, 500)}` : ".";
      const outcome: CallOutcome = {
        type: "error",
        name: "AppCallFailed",
        message: `The task returned an error${text}`,
        details: { reason: "tool_error", result },
      };
      await settleTaskCall(platform, op, next, outcome, "tool_error", result);
      return;
    }
    await settleTaskCall(platform, op, next, { type: "ok", resultJson }, null, result);
    return;
  }
  const reason = task.status === "cancelled" ? "cancelled" : "tool_error";
  const message =
    task.status === "cancelled"
      ? `The App cancelled the task${statusMessage ? `: ${statusMessage}` : "."}`
      : `The task failed: ${redact(task.error?.message ?? "no reason given", secrets)}`;
  await settleTaskCall(platform, op, next, failedOutcome(reason, message), reason);
}

/** After the App's poll interval, doubling with each unchanged poll, up to 30 s. */
function backoff(intervalMs: number, polls: number): number {
  const base = Math.max(MIN_DELAY_MS, Math.min(intervalMs, MAX_DELAY_MS));
  return Math.min(base * 2 ** Math.min(polls, 16), MAX_DELAY_MS);
}

async function schedulePoll(
  platform: Platform,
  operationId: string,
  polls: number,
  delayMs: number,
  failures = 0,
): Promise<void> {
  // Each poll has its own key (the job that schedules it still holds the previous one).
  const seq = Date.now();
  await platform.jobs.enqueue(POLL_TASK, { operationId, polls, failures } satisfies PollPayload, {
    key: `poll-task:${operationId}:${seq}`,
    delayMs,
  });
}

async function storeTask(platform: Platform, op: TaskOpRow, task: StoredTask): Promise<void> {
  await platform.db.query(
    "update app_operations set task_status = $1, task_enc = $2 where id = $3 and status = 'Task'",
    [task.status, sealTask(platform, op.id, task), op.id],
  );
  platform.events.emit("run", { runId: op.run_id, chatId: op.chat_id });
}

/**
 * The task finished: the operation gets its final status and result, the call its outcome (once: only
 * the poll that moves the operation out of `Task` records it), and the program runs again.
 */
export async function settleTaskCall(
  platform: Platform,
  op: TaskOpRow,
  task: StoredTask,
  outcome: CallOutcome,
  errorReason: string | null,
  result?: unknown,
): Promise<void> {
  const stored =
    outcome.type === "ok"
      ? result
      : { error: { name: outcome.name, message: outcome.message, details: outcome.details } };
  if (!op.run_id || op.call_index === null) return;
  // One statement: the operation leaves `Task` and the call gets its outcome together, so a re-run never
  // sees a finished task without its outcome (that would look like a call sent with its outcome lost).
  const now = Date.now();
  const moved = await platform.db.query(
    `with moved as (
       update app_operations set status = $1, task_status = $2, task_enc = $3, result_enc = $4, error_reason = $5, finished_at = $6
       where id = $7 and status = 'Task' returning id),
     seq as (
       update code_runs set completions = completions + 1, updated_at = $6
       where id = $8 and exists (select 1 from moved) returning completions)
     update code_run_calls set outcome_enc = $9, completed_seq = coalesce((select completions from seq), 0), rejection = null
     where run_id = $8 and idx = $10 and exists (select 1 from moved) returning idx`,
    [
      outcome.type === "ok" ? "Completed" : "Failed",
      task.status,
      sealTask(platform, op.id, task),
      platform.seal(`app_operations:${op.id}:result`, JSON.stringify(stored ?? null)),
      errorReason,
      now,
      op.id,
      op.run_id,
      platform.seal(`code_run_calls:${op.run_id}:${op.call_index}:outcome`, JSON.stringify(outcome)),
      op.call_index,
    ],
  );
  if (!moved.length) return;
  platform.events.emit("run", { runId: op.run_id, chatId: op.chat_id });
  await platform.jobs.enqueue("resume-run", { runId: op.run_id }, { key: `resume-run:task:${op.id}` });
}

/**
 * The task asks the person something: the operation shows the App's question in the chat like an
 * elicitation (input id `task:<operation>`), until app-operations.ts sends the answer with `tasks/update`.
 */
async function askForTask(
  platform: Platform,
  op: TaskOpRow,
  next: StoredTask,
  task: TaskState,
  secrets: Awaited<ReturnType<typeof knownSecrets>>,
): Promise<void> {
  const [key, request] =
    Object.entries(task.inputRequests ?? {}).find(([, r]) => r.method === "elicitation/create") ?? [];
  const params = (request?.params ?? {}) as { message?: unknown; requestedSchema?: unknown; mode?: unknown };
  if (!key || params.mode === "url" || typeof params.requestedSchema !== "object" || params.requestedSchema === null) {
    // Nothing OpenBot can show a person (sampling, a URL): the task is given up.
    await platform.apps
      .task(op.connection_id, next.taskId, { type: "cancel" }, { userId: op.created_by ?? undefined })
      .catch(() => undefined);
    const outcome = failedOutcome(
      "tool_error",
      "The task asked for something OpenBot does not offer; it was cancelled.",
    );
    await settleTaskCall(platform, op, { ...next, status: "cancelled" }, outcome, "tool_error");
    return;
  }
  const binding = (
    await platform.db.query<{ binding: string }>("select binding from code_run_calls where run_id = $1 and idx = $2", [
      op.run_id,
      op.call_index,
    ])
  )[0]?.binding;
  const question = {
    message: redact(String(params.message ?? "").slice(0, 4000), secrets),
    requestedSchema: redact(params.requestedSchema, secrets),
    binding: binding ?? "",
    taskInputKey: key,
  };
  await platform.db.query(
    `update app_operations set status = 'InputRequired', input_id = $1, input_enc = $2, task_status = $3, task_enc = $4
     where id = $5 and status = 'Task'`,
    [
      `task:${op.id}`,
      platform.seal(`app_operations:${op.id}:input`, JSON.stringify(question)),
      next.status,
      sealTask(platform, op.id, next),
      op.id,
    ],
  );
  platform.events.emit("run", { runId: op.run_id, chatId: op.chat_id });
}

/**
 * A person answered a task's question (app-operations.ts): the answer goes to the App with
 * `tasks/update`, the operation is a `Task` again and polling goes on.
 */
export async function answerTaskInput(
  platform: Platform,
  operationId: string,
  answer: { action: string; content?: unknown },
): Promise<void> {
  const op = await loadTaskOp(platform, operationId);
  if (op?.status !== "InputRequired") return;
  const stored = openTask(platform, op);
  const input = (
    await platform.db.query<{ input_enc: string | null }>("select input_enc from app_operations where id = $1", [op.id])
  )[0]?.input_enc;
  if (!stored || !input) return;
  const { taskInputKey, requestedSchema } = JSON.parse(platform.open(`app_operations:${op.id}:input`, input)) as {
    taskInputKey: string;
    requestedSchema: unknown;
  };
  const problem = taskAnswerProblem(requestedSchema, answer);
  if (problem) throw new AppError("BAD_REQUEST", problem);
  await platform.apps.task(
    op.connection_id,
    stored.taskId,
    { type: "update", inputResponses: { [taskInputKey]: answer } },
    { userId: op.created_by ?? undefined },
  );
  const next: StoredTask = { ...stored, status: "working" };
  const moved = await platform.db.query(
    `update app_operations set status = 'Task', input_id = null, task_status = 'working', task_enc = $1
     where id = $2 and status = 'InputRequired' returning id`,
    [sealTask(platform, op.id, next), op.id],
  );
  if (moved.length) await schedulePoll(platform, op.id, 0, 0);
  platform.events.emit("run", { runId: op.run_id, chatId: op.chat_id });
}

/** Every task the run still has out at its App is cancelled there (a job each), and its call fails `cancelled`. */
export async function cancelRunTasks(platform: Platform, runId: string): Promise<void> {
  const ops = await platform.db.query<{ id: string }>(
    "select id from app_operations where run_id = $1 and status in ('Task', 'InputRequired') and task_enc is not null",
    [runId],
  );
  for (const op of ops) await enqueueCancel(platform, op.id);
}

async function enqueueCancel(platform: Platform, operationId: string): Promise<void> {
  await platform.jobs.enqueue(CANCEL_TASK, { operationId }, { key: `cancel-task:${operationId}` });
}

/** The `cancel-task` job: `tasks/cancel` at the App, then the operation is Failed (cancelled). */
export async function cancelTask(platform: Platform, payload: { operationId: string }): Promise<void> {
  const op = await loadTaskOp(platform, payload.operationId);
  if (!op || (op.status !== "Task" && op.status !== "InputRequired")) return;
  const stored = openTask(platform, op);
  if (!stored) return;
  // A failure throws: the job is retried with backoff, so a task out at an App is not forgotten.
  await platform.apps.task(op.connection_id, stored.taskId, { type: "cancel" }, { userId: op.created_by ?? undefined });
  const task: StoredTask = { ...stored, status: "cancelled", statusMessage: "Cancelled because the run ended." };
  await platform.db.query(
    `update app_operations set status = 'Failed', task_status = 'cancelled', task_enc = $1, error_reason = 'cancelled',
       input_id = case when status = 'InputRequired' then null else input_id end, finished_at = $2
     where id = $3 and status in ('Task', 'InputRequired')`,
    [sealTask(platform, op.id, task), Date.now(), op.id],
  );
  platform.events.emit("run", { runId: op.run_id, chatId: op.chat_id });
}
