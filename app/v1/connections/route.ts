import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { addConnection, listConnections } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/connections", async ({ ctx }) => listConnections(ctx.platform, ctx.principal)));
export const POST = rest(
  guard("POST /v1/connections", ({ ctx, body }) => addConnection(ctx.platform, ctx.principal, body)),
  { status: 201 },
);
