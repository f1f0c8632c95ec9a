/**
 * App operations that wait for a person's input (an MCP server's elicitation): listed for the chat and
 * answered outside the program — in the chat's form generated from the requested schema, or over the API.
 */
import "server-only";
import type { AppInputAnswer } from "@/contracts/app-operations";
import { requirePermission } from "./auth";
import { ownedChat, readableChat } from "./chats";
import { answerTaskInput } from "./code-runs/tasks";
import type { ServiceContext } from "./context";
import { AppError, isAppError } from "./errors";

export interface PendingInputView {
  operationId: string;
  chatId: string;
  runId: string | null;
  binding: string;
  message: string;
  requestedSchema: Record<string, unknown>;
  startedAt: number;
}

export async function listPendingInputs(ctx: ServiceContext, chatId: string): Promise<PendingInputView[]> {
  const p = requirePermission(ctx.principal, "apps.use");
  await readableChat(ctx.platform.db, p, chatId);
  const rows = await ctx.platform.db.query<{
    id: string;
    chat_id: string;
    run_id: string | null;
    input_enc: string;
    started_at: string;
  }>(
    "select id, chat_id, run_id, input_enc, started_at from app_operations where chat_id = $1 and status = 'InputRequired' order by started_at",
    [chatId],
  );
  return rows.map((r) => {
    const q = JSON.parse(ctx.platform.open(`app_operations:${r.id}:input`, r.input_enc)) as {
      message: string;
      requestedSchema: Record<string, unknown>;
      binding: string;
    };
    return {
      operationId: r.id,
      chatId: r.chat_id,
      runId: r.run_id,
      binding: q.binding,
      message: q.message,
      requestedSchema: q.requestedSchema,
      startedAt: Number(r.started_at),
    };
  });
}

export async function answerPendingInput(
  ctx: ServiceContext,
  { operationId, answer }: { operationId: string; answer: AppInputAnswer },
): Promise<{ operationId: string; status: string }> {
  const p = requirePermission(ctx.principal, "apps.use");
  const row = (
    await ctx.platform.db.query<{ chat_id: string | null; input_id: string | null; status: string }>(
      "select chat_id, input_id, status from app_operations where id = $1",
      [operationId],
    )
  )[0];
  if (!row?.chat_id) throw new AppError("NOT_FOUND", "No such App operation.");
  await ownedChat(ctx.platform.db, p, row.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such App operation.");
  });
  if (row.status !== "InputRequired" || !row.input_id)
    throw new AppError("CONFLICT", `This App operation is ${row.status}, not waiting for input.`);
  if (row.input_id.startsWith("task:")) {
    // A task's question (code-runs/tasks.ts): the answer goes to the App with tasks/update.
    await answerTaskInput(ctx.platform, operationId, answer).catch((error: unknown) => {
      if (isAppError(error)) throw error;
      throw new AppError("CONFLICT", `The App did not take the answer: ${(error as Error).message}`);
    });
    return { operationId, status: "Task" };
  }
  const pending = ctx.platform.apps.pendingInput(row.input_id);
  if (pending?.state !== "pending") throw new AppError("CONFLICT", "The App no longer waits for this input.");
  try {
    await pending.answer(answer);
  } catch (error) {
    const e = error as { reason?: string; message?: string };
    if (e.reason === "invalid_arguments")
      throw new AppError("BAD_REQUEST", e.message ?? "The answer does not fit the requested form.");
  }
  await pending.result.catch(() => undefined);
  await new Promise((r) => setTimeout(r, 0));
  const after = (
    await ctx.platform.db.query<{ status: string }>("select status from app_operations where id = $1", [operationId])
  )[0];
  return { operationId, status: after?.status ?? "Unknown" };
}
