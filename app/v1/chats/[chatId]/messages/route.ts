import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { listMessages } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/chats/[chatId]/messages", ({ ctx, params }) => listMessages(ctx, params.chatId!)),
);
