/**
 * The turn loop: one model conversation step by step (at most ten), streamed to the chat as turn
 * events, with the turn's tools (tools.ts). A stopped turn keeps what it had; a failure is logged by
 * error id. `createTurn` opens the turn row (one running turn a chat, for turns a person starts).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { type LanguageModel, type ModelMessage, stepCountIs, streamText } from "ai";
import type { TurnStatus } from "@/contracts/turn-events";
import { logFailure } from "../../log";
import type { Platform } from "../../platform";
import type { Principal } from "../auth";
import { touchChat } from "../chats";
import { AppError } from "../errors";
import { readSettings } from "../settings";
import { appendMessages, loadModelMessages } from "./messages";
import { SYSTEM_PROMPT } from "./prompt";
import { turnTools } from "./tools";
import { emitTurnEvent } from "./turn-feed";

/**
 * A chat has at most one turn a person started running at a time: `exclusive` inserts the turn only if
 * none runs (one statement, so two sends at once cannot both pass) and answers CONFLICT otherwise. A
 * "Running" turn this process does not drive was cut off by a restart and is closed as Failed first.
 */
export async function createTurn(
  platform: Platform,
  p: Principal,
  chatId: string,
  host: "browser" | "server",
  options: { exclusive?: boolean } = {},
): Promise<string> {
  const turnId = `turn_${randomUUID()}`;
  const now = Date.now();
  platform.activeTurns.set(turnId, new AbortController());
  const values = [turnId, chatId, host, p.userId, p.keyId, now];
  if (options.exclusive) {
    const running = await platform.db.query<{ id: string }>(
      "select id from turns where chat_id = $1 and status = 'Running'",
      [chatId],
    );
    for (const r of running.filter((r) => !platform.activeTurns.has(r.id))) {
      await platform.db.query(
        "update turns set status = 'Failed', error = $1, updated_at = $2 where id = $3 and status = 'Running'",
        ["The turn was interrupted.", now, r.id],
      );
    }
    const inserted = await platform.db.query(
      `insert into turns (id, chat_id, status, host, created_by, api_key_id, created_at, updated_at)
       select $1, $2, 'Running', $3, $4, $5, $6, $6 where not exists (select 1 from turns where chat_id = $2 and status = 'Running')
       returning id`,
      values,
    );
    if (!inserted.length) {
      platform.activeTurns.delete(turnId);
      throw new AppError(
        "CONFLICT",
        "The assistant is still answering in this chat; wait for it to finish or stop it before sending another message.",
      );
    }
  } else {
    await platform.db.query(
      "insert into turns (id, chat_id, status, host, created_by, api_key_id, created_at, updated_at) values ($1, $2, 'Running', $3, $4, $5, $6, $6)",
      values,
    );
  }
  await touchChat(platform.db, chatId);
  emitTurnEvent(platform, chatId, { type: "turn-start", turnId });
  return turnId;
}

export async function runLoop(
  platform: Platform,
  principal: Principal,
  chatId: string,
  turnId: string,
  model: LanguageModel,
  host: "browser" | "server",
) {
  const controller = platform.activeTurns.get(turnId) ?? new AbortController();
  platform.activeTurns.set(turnId, controller);
  let status: TurnStatus = "Completed";
  let error: string | null = null;
  // What a stopped turn keeps: the messages of its finished steps and the text of the step it was in.
  let finished: ModelMessage[] = [];
  let partial = "";
  try {
    const settings = await readSettings(platform.db);
    const tools = turnTools({ platform, principal }, settings.codeMode, {
      chatId,
      turnId,
      host,
      signal: controller.signal,
    });
    const history = await loadModelMessages(platform, chatId);
    const result = streamText({
      model,
      system: SYSTEM_PROMPT,
      messages: history,
      tools,
      stopWhen: stepCountIs(10),
      abortSignal: controller.signal,
      maxRetries: 1,
      onStepFinish: (step) => {
        finished = [...step.response.messages];
        partial = "";
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        partial += part.text;
        emitTurnEvent(platform, chatId, { type: "text-delta", turnId, text: part.text });
      } else if (part.type === "tool-call")
        emitTurnEvent(platform, chatId, {
          type: "tool-call",
          turnId,
          toolCallId: part.toolCallId,
          toolName: part.toolName,
        });
      else if (part.type === "tool-result")
        emitTurnEvent(platform, chatId, { type: "tool-result", turnId, toolCallId: part.toolCallId });
      else if (part.type === "error") throw part.error;
    }
    const response = await result.response;
    await appendMessages(platform, chatId, turnId, response.messages);
  } catch (cause) {
    if (controller.signal.aborted) {
      status = "Cancelled";
      error = "The turn was stopped.";
      const kept: ModelMessage[] = [...finished];
      if (partial)
        kept.push({
          role: "assistant",
          content: [{ type: "text", text: partial }],
          providerOptions: { openbot: { stopped: true } },
        });
      await appendMessages(platform, chatId, turnId, kept).catch((cause) =>
        logFailure("turn_partial_not_saved", cause, { turnId }),
      );
    } else {
      status = "Failed";
      const errorId = logFailure("turn_failed", cause, { turnId });
      error = `The model could not answer (error id ${errorId}).`;
    }
  } finally {
    platform.activeTurns.delete(turnId);
    await platform.db.query("update turns set status = $1, error = $2, updated_at = $3 where id = $4", [
      status,
      error,
      Date.now(),
      turnId,
    ]);
    emitTurnEvent(platform, chatId, { type: "turn-end", turnId, status });
  }
}
