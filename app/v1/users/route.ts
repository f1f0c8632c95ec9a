import { rest } from "@/server/http/rest";
import { addUser, listUsers } from "@/server/services/people";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx }) => listUsers(ctx.platform.db, ctx.principal));
export const POST = rest(({ ctx, body }) => addUser(ctx.platform.db, ctx.principal, body), { status: 201 });
