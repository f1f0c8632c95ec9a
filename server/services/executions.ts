/**
 * Executions: code runs and App operations share one execution model (seed 001): each has an
 * execution id and a common status, observed and stopped through one API.
 */
import "server-only";
import type { Platform } from "../platform";
import { requirePermission } from "./auth";
import { readableChat } from "./chats";
import { cancelRun, getRun } from "./code-runs";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";

export interface ExecutionView {
  executionId: string;
  kind: "code_run" | "app_operation";
  id: string;
  status: string;
  chatId: string | null;
  createdAt: number;
  updatedAt: number;
}

async function find(platform: Platform, executionId: string) {
  const run = (
    await platform.db.query<{ id: string; status: string; chat_id: string; created_at: string; updated_at: string }>(
      "select id, status, chat_id, created_at, updated_at from code_runs where execution_id = $1",
      [executionId],
    )
  )[0];
  if (run)
    return {
      kind: "code_run" as const,
      id: run.id,
      status: run.status,
      chatId: run.chat_id,
      createdAt: Number(run.created_at),
      updatedAt: Number(run.updated_at),
    };
  const op = (
    await platform.db.query<{
      id: string;
      status: string;
      chat_id: string | null;
      run_id: string | null;
      started_at: string;
      finished_at: string | null;
    }>("select id, status, chat_id, run_id, started_at, finished_at from app_operations where execution_id = $1", [
      executionId,
    ])
  )[0];
  if (op) {
    return {
      kind: "app_operation" as const,
      id: op.id,
      status: op.status,
      chatId: op.chat_id,
      runId: op.run_id,
      createdAt: Number(op.started_at),
      updatedAt: Number(op.finished_at ?? op.started_at),
    };
  }
  return null;
}

export async function getExecution(ctx: ServiceContext, executionId: string): Promise<ExecutionView> {
  const p = requirePermission(ctx.principal, "apps.use");
  const found = await find(ctx.platform, executionId);
  if (!found?.chatId) throw new AppError("NOT_FOUND", "No such execution.");
  await readableChat(ctx.platform.db, p, found.chatId).catch(() => {
    throw new AppError("NOT_FOUND", "No such execution.");
  });
  return {
    executionId,
    kind: found.kind,
    id: found.id,
    status: found.status,
    chatId: found.chatId,
    createdAt: found.createdAt,
    updatedAt: found.updatedAt,
  };
}

/** Stops a code run (its worker, its pending decisions) or the run an App operation belongs to. */
export async function cancelExecution(ctx: ServiceContext, executionId: string): Promise<ExecutionView> {
  const view = await getExecution(ctx, executionId);
  if (view.kind === "code_run") await cancelRun(ctx, view.id);
  else {
    const found = await find(ctx.platform, executionId);
    const runId = found && "runId" in found ? found.runId : null;
    if (!runId) throw new AppError("BAD_REQUEST", "This App operation is not part of a run and cannot be stopped.");
    await getRun(ctx, runId);
    await cancelRun(ctx, runId);
  }
  return getExecution(ctx, executionId);
}
