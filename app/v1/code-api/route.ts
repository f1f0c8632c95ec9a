import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { codeApi } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/code-api", ({ ctx, query }) =>
    codeApi(ctx.platform, ctx.principal, {
      query: query.get("query") ?? undefined,
      connection: query.get("connection") ?? undefined,
    }),
  ),
);
