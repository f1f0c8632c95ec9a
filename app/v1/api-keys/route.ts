import { rest } from "@/server/http/rest";
import { addApiKey } from "@/server/services/people";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx, body }) => addApiKey(ctx.platform.db, ctx.principal, body), { status: 201 });
