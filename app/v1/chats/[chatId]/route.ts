import { updateChatInput } from "@/contracts/chats";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { deleteChat } from "@/server/services/agent/turns";
import { getChat, updateChat } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const GET = rest<{ chatId: string }>(
  guard("GET /v1/chats/[chatId]", ({ ctx, params }) => getChat(ctx, params.chatId)),
);
/** `{title?, pinned?}`: rename or pin (owner or admin). */
export const PATCH = rest<{ chatId: string }>(
  guard("PATCH /v1/chats/[chatId]", ({ ctx, params, body }) =>
    updateChat(ctx, parseInput(updateChatInput, withBody(body, { id: params.chatId }))),
  ),
);
/** Deletes the chat with its turns, messages, runs and decisions (owner or admin). */
export const DELETE = rest<{ chatId: string }>(
  guard("DELETE /v1/chats/[chatId]", ({ ctx, params }) => deleteChat(ctx, params.chatId)),
);
