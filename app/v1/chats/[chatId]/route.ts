import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { deleteChat } from "@/server/services/agent/turns";
import { readableChat, updateChat } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const GET = rest<{ chatId: string }>(
  guard("GET /v1/chats/[chatId]", ({ ctx, params }) => readableChat(ctx.platform.db, ctx.principal, params.chatId)),
);
/** `{title?, pinned?}`: rename or pin (owner or admin). */
export const PATCH = rest<{ chatId: string }>(
  guard("PATCH /v1/chats/[chatId]", ({ ctx, params, body }) =>
    updateChat(ctx.platform.db, ctx.principal, params.chatId, body),
  ),
);
/** Deletes the chat with its turns, messages, runs and decisions (owner or admin). */
export const DELETE = rest<{ chatId: string }>(
  guard("DELETE /v1/chats/[chatId]", ({ ctx, params }) => deleteChat(ctx, params.chatId)),
);
