import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { createChat, listChats } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/chats", ({ ctx }) => listChats(ctx.platform.db, ctx.principal)));
export const POST = rest(guard("POST /v1/chats", ({ ctx, body }) => createChat(ctx.platform.db, ctx.principal, body)), { status: 201 });
