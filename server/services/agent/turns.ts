/**
 * Turns with the model, as the adapters call them: start one (the loop runs in the background), run one
 * to its end (API turns: the server runner runs the programs), read, stop, and delete a chat with its
 * turns. The loop is loop.ts, the tools tools.ts, the messages messages.ts, late results late-results.ts.
 */
import "server-only";
import { generateText, type LanguageModel } from "ai";
import type { SendTurnInput } from "@/contracts/chats";
import { LIVE_RUN_STATUSES_SQL } from "@/contracts/code-run";
import type { TurnStatus, TurnView } from "@/contracts/turn-events";
import { logFailure } from "../../log";
import type { Platform } from "../../platform";
import { requirePermission } from "../auth";
import { autoTitle, deleteChatRows, ownedChat, readableChat } from "../chats";
import { cancelRun } from "../code-runs/runs";
import type { ServiceContext } from "../context";
import { AppError } from "../errors";
import { createTurn, runLoop } from "./loop";
import { appendMessages, listMessages } from "./messages";
import { resolveModel } from "./models";
import { emitTurnEvent } from "./turn-feed";

export { listMessages };

/** Starts a turn: stores the message and runs the loop in the background. Answers with the turn id. */
export async function startTurn(
  ctx: ServiceContext,
  { chatId, message }: SendTurnInput,
  host: "browser" | "server",
): Promise<{ turnId: string; done: Promise<void> }> {
  const p = requirePermission(ctx.principal, "sessions.write");
  await ownedChat(ctx.platform.db, p, chatId);
  const model = await resolveModel(ctx.platform);
  if (!model)
    throw new AppError(
      "UNAVAILABLE",
      "No model is configured, so this chat is in manual mode: write and run programs yourself, or ask an admin to set a model in Admin → Model.",
    );
  const turnId = await createTurn(ctx.platform, p, chatId, host, { exclusive: true });
  const first =
    (await ctx.platform.db.query("select 1 from messages where chat_id = $1 limit 1", [chatId])).length === 0;
  await appendMessages(ctx.platform, chatId, turnId, [{ role: "user", content: message }]);
  if (first) ctx.platform.track(titleChat(ctx.platform, chatId, message, model));
  const done = runLoop(ctx.platform, p, chatId, turnId, model, host);
  ctx.platform.track(done);
  return { turnId, done };
}

/** Runs a turn to its end and answers with it (API turns: the server runner runs the programs). */
export async function runTurnToEnd(ctx: ServiceContext, input: SendTurnInput): Promise<TurnView> {
  requirePermission(ctx.principal, "sessions.read");
  const { turnId, done } = await startTurn(ctx, input, "server");
  await done;
  return getTurn(ctx, turnId);
}

export async function getTurn(ctx: ServiceContext, turnId: string): Promise<TurnView> {
  const p = requirePermission(ctx.principal, "sessions.read");
  const row = (
    await ctx.platform.db.query<{
      id: string;
      chat_id: string;
      status: TurnStatus;
      error: string | null;
      created_at: string;
      updated_at: string;
    }>("select * from turns where id = $1", [turnId])
  )[0];
  if (!row) throw new AppError("NOT_FOUND", "No such turn.");
  await readableChat(ctx.platform.db, p, row.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such turn.");
  });
  const messages = (await listMessages(ctx, row.chat_id)).filter((m) => m.turnId === turnId);
  return {
    id: row.id,
    chatId: row.chat_id,
    status: row.status,
    error: row.error,
    messages,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * Titles a new chat from its first message: at once with its first words, then (if the model answers)
 * with a short title the model writes. A title the person set in the meantime is kept.
 */
async function titleChat(platform: Platform, chatId: string, message: string, model: LanguageModel): Promise<void> {
  const words = message.replace(/\s+/g, " ").trim().split(" ").slice(0, 8).join(" ");
  const quick = words.length > 60 ? `${words.slice(0, 59)}…` : words;
  if (!(await autoTitle(platform.db, chatId, "New chat", quick))) return;
  emitTurnEvent(platform, chatId, { type: "chat-title", turnId: "", title: quick });
  try {
    const answer = await generateText({
      model,
      maxRetries: 0,
      abortSignal: AbortSignal.timeout(15_000),
      messages: [
        {
          role: "user",
          content: `Write a title for this chat of at most six words. Answer with the title only.\n\nFirst message: ${message.slice(0, 2_000)}`,
        },
      ],
    });
    const title = answer.text
      .replace(/^["'\s#*]+|["'\s.*]+$/g, "")
      .replace(/\s+/g, " ")
      .slice(0, 80);
    if (title && (await autoTitle(platform.db, chatId, quick, title)))
      emitTurnEvent(platform, chatId, { type: "chat-title", turnId: "", title });
  } catch (cause) {
    logFailure("chat_title_failed", cause, { chatId });
  }
}

/** Interrupts a turn: the model stream stops and its running programs are cancelled. */
export async function stopTurn(ctx: ServiceContext, turnId: string): Promise<TurnView> {
  requirePermission(ctx.principal, "sessions.write");
  const view = await getTurn(ctx, turnId);
  await ownedChat(ctx.platform.db, ctx.principal, view.chatId);
  ctx.platform.events.emit("turn-stop", { turnId });
  const running = await ctx.platform.db.query<{ id: string }>(
    `select id from code_runs where turn_id = $1 and status in ${LIVE_RUN_STATUSES_SQL}`,
    [turnId],
  );
  for (const r of running) await cancelRun(ctx, r.id).catch(() => undefined);
  return getTurn(ctx, turnId);
}

/** Deletes a chat (owner or admin, with sessions.write): its turns stop, its runs are cancelled, then every row goes. */
export async function deleteChat(ctx: ServiceContext, chatId: string): Promise<{ ok: true; id: string }> {
  requirePermission(ctx.principal, "sessions.write");
  await ownedChat(ctx.platform.db, ctx.principal, chatId);
  const turns = await ctx.platform.db.query<{ id: string }>(
    "select id from turns where chat_id = $1 and status = 'Running'",
    [chatId],
  );
  for (const t of turns) ctx.platform.events.emit("turn-stop", { turnId: t.id });
  // Marked reported first: a run cancelled here must not post its late result into the chat being deleted.
  const running = await ctx.platform.db.query<{ id: string }>(
    `update code_runs set reported = true where chat_id = $1 and status in ${LIVE_RUN_STATUSES_SQL} returning id`,
    [chatId],
  );
  for (const r of running) await cancelRun(ctx, r.id).catch(() => undefined);
  await deleteChatRows(ctx.platform.db, chatId);
  return { ok: true, id: chatId };
}
