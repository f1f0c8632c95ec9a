import { rest } from "@/server/http/rest";
import { addConnection, listConnections } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const GET = rest(async ({ ctx }) => listConnections(ctx.platform, ctx.principal));
export const POST = rest(({ ctx, body }) => addConnection(ctx.platform, ctx.principal, body), { status: 201 });
