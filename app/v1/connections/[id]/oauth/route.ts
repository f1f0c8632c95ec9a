import { guard } from "@/server/api/access";
import { ownOrigin } from "@/server/http/origin";
import { rest } from "@/server/http/rest";
import { oauthStatus, signOutOAuth, startOAuth } from "@/server/services/oauth";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/connections/[id]/oauth", ({ ctx, params }) => oauthStatus(ctx.platform, ctx.principal, params.id!)),
);
export const POST = rest(
  guard("POST /v1/connections/[id]/oauth", ({ ctx, req, params, body }) =>
    startOAuth(ctx.platform, ctx.principal, params.id!, body, ownOrigin(req, ctx.platform.env)),
  ),
);
export const DELETE = rest(
  guard("DELETE /v1/connections/[id]/oauth", ({ ctx, params, body, query }) =>
    signOutOAuth(ctx.platform, ctx.principal, params.id!, body ?? { for: query.get("for") ?? undefined }),
  ),
);
