import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { shareChat } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/chats/[chatId]/shares", ({ ctx, params, body }) =>
    shareChat(ctx.platform.db, ctx.principal, params.chatId!, body),
  ),
  { status: 201 },
);
