import { shareChatInput } from "@/contracts/chats";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { shareChat } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/chats/[chatId]/shares", ({ ctx, params, body }) =>
    shareChat(ctx, parseInput(shareChatInput, withBody(body, { chatId: params.chatId }))),
  ),
  { status: 201 },
);
