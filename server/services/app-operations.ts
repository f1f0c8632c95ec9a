/**
 * App operations that wait for a person's input (an MCP server's question): listed for the chat and
 * answered outside the program — in the chat's card (a form generated from the requested schema, or a
 * link to open for a URL-mode question), or over the API. Only the person whose chat it is may answer.
 *
 * A program's call to a 2026-07-28 server is parked durably (app-input.ts): an accepted answer is checked
 * against the schema and stored sealed, and the run is re-run (`input-answered` → `resume-run`), which
 * sends the retry once; decline or cancel ends the call with AppInputRequired without asking the App again.
 * An older server's `elicitation/create` holds its request open at the App in this process: the answer
 * goes to the App and its final result becomes the call's outcome. That request does not survive a
 * restart: answering it then ends the call with AppInputRequired (expired).
 */
import "server-only";
import type { AppInputAnswer } from "@/contracts/app-operations";
import { isLiveRunStatus, LIVE_RUN_STATUSES_SQL } from "@/contracts/code-run";
import { answerProblem, type InputAnswer } from "../apps/registry";
import type { InputQuestion } from "./app-input";
import { storeAnswer } from "./app-input";
import { requirePermission } from "./auth";
import { ownedChat, readableChat } from "./chats";
import { endParkedInput } from "./code-runs/parked";
import { answerTaskInput } from "./code-runs/tasks";
import type { ServiceContext } from "./context";
import { AppError, isAppError } from "./errors";

export interface PendingInputView {
  operationId: string;
  chatId: string;
  runId: string | null;
  binding: string;
  message: string;
  /** `form`: answer `requestedSchema`; `url`: the person opens `url`, then says Done (accept) or Decline. */
  mode: "form" | "url";
  requestedSchema: Record<string, unknown>;
  url: string | null;
  startedAt: number;
  expiresAt: number | null;
}

function question(ctx: ServiceContext, id: string, inputEnc: string): InputQuestion {
  const q = JSON.parse(ctx.platform.open(`app_operations:${id}:input`, inputEnc)) as Partial<InputQuestion>;
  return {
    binding: q.binding ?? "",
    message: q.message ?? "",
    mode: q.mode === "url" ? "url" : "form",
    requestedSchema: q.requestedSchema ?? {},
    ...(q.url ? { url: q.url } : {}),
  };
}

export async function listPendingInputs(ctx: ServiceContext, chatId: string): Promise<PendingInputView[]> {
  const p = requirePermission(ctx.principal, "apps.use");
  await readableChat(ctx.platform.db, p, chatId);
  // A question of a run that already ended is nobody's to answer any more.
  const rows = await ctx.platform.db.query<{
    id: string;
    chat_id: string;
    run_id: string | null;
    input_enc: string;
    started_at: string;
    input_expires_at: string | null;
  }>(
    `select o.id, o.chat_id, o.run_id, o.input_enc, o.started_at, o.input_expires_at from app_operations o
     where o.chat_id = $1 and o.status = 'InputRequired'
       and (o.run_id is null or exists (select 1 from code_runs r where r.id = o.run_id and r.status in ${LIVE_RUN_STATUSES_SQL}))
     order by o.started_at`,
    [chatId],
  );
  return rows.map((r) => {
    const q = question(ctx, r.id, r.input_enc);
    return {
      operationId: r.id,
      chatId: r.chat_id,
      runId: r.run_id,
      binding: q.binding,
      message: q.message,
      mode: q.mode,
      requestedSchema: q.requestedSchema,
      url: q.url ?? null,
      startedAt: Number(r.started_at),
      expiresAt: r.input_expires_at === null ? null : Number(r.input_expires_at),
    };
  });
}

export async function answerPendingInput(
  ctx: ServiceContext,
  { operationId, answer }: { operationId: string; answer: AppInputAnswer },
): Promise<{ operationId: string; status: string }> {
  const p = requirePermission(ctx.principal, "apps.use");
  const { platform } = ctx;
  const row = (
    await platform.db.query<{
      chat_id: string | null;
      run_id: string | null;
      input_id: string | null;
      input_enc: string | null;
      input_state_enc: string | null;
      status: string;
    }>("select chat_id, run_id, input_id, input_enc, input_state_enc, status from app_operations where id = $1", [
      operationId,
    ])
  )[0];
  if (!row?.chat_id) throw new AppError("NOT_FOUND", "No such App operation.");
  await ownedChat(platform.db, p, row.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such App operation.");
  });
  if (row.status !== "InputRequired" || !row.input_enc)
    throw new AppError("CONFLICT", `This App operation is ${row.status}, not waiting for input.`);
  if (row.input_id?.startsWith("task:")) {
    // A task's question (code-runs/tasks.ts): the answer goes to the App with tasks/update.
    await answerTaskInput(ctx.platform, operationId, answer).catch((error: unknown) => {
      if (isAppError(error)) throw error;
      throw new AppError("CONFLICT", `The App did not take the answer: ${(error as Error).message}`);
    });
    return { operationId, status: "Task" };
  }
  const q = question(ctx, operationId, row.input_enc);
  if (row.run_id) {
    const run = await platform.db.query<{ status: string }>("select status from code_runs where id = $1", [row.run_id]);
    if (!isLiveRunStatus(run[0]?.status))
      throw new AppError(
        "CONFLICT",
        `The run that asked is ${run[0]?.status ?? "gone"}; nothing waits for this answer.`,
      );
  }

  if (row.input_state_enc) {
    // Parked durably: store the answer, the re-run sends it.
    if (answer.action !== "accept") {
      if (!(await endParkedInput(platform, operationId, answer.action)))
        throw new AppError("CONFLICT", "This question was answered or ended meanwhile.");
      return { operationId, status: "Failed" };
    }
    let stored: InputAnswer | { action: "accept" } = answer;
    if (q.mode === "url") stored = { action: "accept" };
    else {
      const problem = answerProblem(q.requestedSchema, answer.content);
      if (problem) throw new AppError("BAD_REQUEST", problem);
    }
    if (!(await storeAnswer(platform, operationId, stored as InputAnswer)))
      throw new AppError("CONFLICT", "This question was answered or ended meanwhile.");
    platform.events.emit("run", { runId: row.run_id, chatId: row.chat_id });
    if (row.run_id)
      platform.events.emit("input-answered", {
        runId: row.run_id,
        operationId,
        key: `resume-run:input:${operationId}`,
      });
    return { operationId, status: "InputAnswered" };
  }

  // An older server's open request, held by this process's App connection.
  const pending = row.input_id ? platform.apps.pendingInput(row.input_id) : undefined;
  const heldBy = (
    JSON.parse(platform.open(`app_operations:${operationId}:input`, row.input_enc)) as { heldBy?: string }
  ).heldBy;
  if (!pending && heldBy && heldBy !== platform.instanceId) {
    // Another live instance holds the App's request: the question is not lost, only not here.
    const alive = await platform.db.query("select 1 from instances where id = $1 and lease_until > $2", [
      heldBy,
      Date.now(),
    ]);
    if (alive.length)
      throw new AppError("CONFLICT", "Another OpenBot instance holds this App's question; try again in a moment.");
  }
  if (pending?.state !== "pending") {
    // Lost (a restart, or the App's own deadline): the call ends as AppInputRequired, expired.
    await endParkedInput(platform, operationId, "expired");
    throw new AppError(
      "CONFLICT",
      "The App no longer waits for this input (its request ended, or OpenBot restarted): the call ended unanswered.",
    );
  }
  if (answer.action === "accept") {
    const problem = answerProblem(pending.requestedSchema, answer.content);
    if (problem) throw new AppError("BAD_REQUEST", problem);
  }
  await pending.answer(answer).catch(() => undefined);
  await pending.result.catch(() => undefined);
  await new Promise((r) => setTimeout(r, 0));
  const after = (
    await platform.db.query<{ status: string }>("select status from app_operations where id = $1", [operationId])
  )[0];
  return { operationId, status: after?.status ?? "Unknown" };
}
