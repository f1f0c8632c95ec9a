import { rest } from "@/server/http/rest";
import { createChat, listChats } from "@/server/services/chats";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx }) => listChats(ctx.platform.db, ctx.principal));
export const POST = rest(({ ctx, body }) => createChat(ctx.platform.db, ctx.principal, body), { status: 201 });
