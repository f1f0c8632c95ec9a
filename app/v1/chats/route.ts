import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { createChat, listChats } from "@/server/services/chats";

export const dynamic = "force-dynamic";
/** `?query=` keeps the chats whose title contains it. */
export const GET = rest(
  guard("GET /v1/chats", ({ ctx, query }) =>
    listChats(ctx.platform.db, ctx.principal, { query: query.get("query") ?? undefined }),
  ),
);
export const POST = rest(
  guard("POST /v1/chats", ({ ctx, body }) => createChat(ctx.platform.db, ctx.principal, body)),
  { status: 201 },
);
