import { shareChatInput } from "@/contracts/chats";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { unshareChat } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const DELETE = rest(
  guard("DELETE /v1/chats/[chatId]/shares/[userId]", ({ ctx, params }) =>
    unshareChat(ctx, parseInput(shareChatInput, params)),
  ),
);
