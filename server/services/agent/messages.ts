/**
 * A chat's messages: stored encrypted one row each (the model's own message shape), handed to the model
 * as its history, and shown to the UI as `ChatMessageView`s (tool results linked to their code runs).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type { ModelMessage } from "ai";
import type { ChatMessageView } from "@/contracts/turn-events";
import type { Platform } from "../../platform";
import { requirePermission } from "../auth";
import { readableChat } from "../chats";
import type { ServiceContext } from "../context";

export async function appendMessages(
  platform: Platform,
  chatId: string,
  turnId: string | null,
  messages: ModelMessage[],
  kind: "model" | "notice" = "model",
) {
  for (const message of messages) {
    const id = `msg_${randomUUID()}`;
    const [row] = await platform.db.query<{ seq: string }>(
      "select coalesce(max(seq), 0) + 1 as seq from messages where chat_id = $1",
      [chatId],
    );
    await platform.db.query(
      "insert into messages (id, chat_id, turn_id, seq, kind, content_enc, created_at) values ($1, $2, $3, $4, $5, $6, $7)",
      [
        id,
        chatId,
        turnId,
        Number(row?.seq ?? 1),
        kind,
        platform.seal(`messages:${id}:content`, JSON.stringify(message)),
        Date.now(),
      ],
    );
  }
}

export async function loadModelMessages(platform: Platform, chatId: string): Promise<ModelMessage[]> {
  const rows = await platform.db.query<{ id: string; content_enc: string }>(
    "select id, content_enc from messages where chat_id = $1 order by seq",
    [chatId],
  );
  return rows.map((r) => JSON.parse(platform.open(`messages:${r.id}:content`, r.content_enc)) as ModelMessage);
}

function toView(
  row: { id: string; turn_id: string | null; kind: "model" | "notice"; created_at: string },
  message: ModelMessage,
  runsByCall: Map<string, string>,
): ChatMessageView {
  const view: ChatMessageView = {
    id: row.id,
    turnId: row.turn_id,
    kind: row.kind,
    role: row.kind === "notice" ? "notice" : (message.role as ChatMessageView["role"]),
    text: "",
    toolCalls: [],
    toolResults: [],
    createdAt: Number(row.created_at),
  };
  if (message.role === "assistant" && message.providerOptions?.openbot?.stopped === true) view.stopped = true;
  if (typeof message.content === "string") view.text = message.content.replace(/^\[OpenBot\] /, "");
  else {
    for (const part of message.content) {
      if (part.type === "text") view.text += part.text;
      else if (part.type === "tool-call")
        view.toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
      else if (part.type === "tool-result") {
        const output = part.output.type === "json" || part.output.type === "text" ? part.output.value : part.output;
        view.toolResults.push({
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output,
          codeRunId: runsByCall.get(part.toolCallId) ?? null,
        });
      }
    }
  }
  return view;
}

/** The chat's messages as the UI shows them. */
export async function listMessages(ctx: ServiceContext, chatId: string): Promise<ChatMessageView[]> {
  const p = requirePermission(ctx.principal, "sessions.read");
  await readableChat(ctx.platform.db, p, chatId);
  const rows = await ctx.platform.db.query<{
    id: string;
    turn_id: string | null;
    kind: "model" | "notice";
    content_enc: string;
    created_at: string;
  }>("select id, turn_id, kind, content_enc, created_at from messages where chat_id = $1 order by seq", [chatId]);
  const runs = await ctx.platform.db.query<{ id: string; call_id: string }>(
    "select id, call_id from code_runs where chat_id = $1 and call_id is not null",
    [chatId],
  );
  const runsByCall = new Map(runs.map((r) => [r.call_id, r.id]));
  return rows.map((r) =>
    toView(r, JSON.parse(ctx.platform.open(`messages:${r.id}:content`, r.content_enc)) as ModelMessage, runsByCall),
  );
}
