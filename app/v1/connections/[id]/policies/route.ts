import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { setPolicies } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const PATCH = rest(
  guard("PATCH /v1/connections/[id]/policies", ({ ctx, params, body }) =>
    setPolicies(ctx.platform, ctx.principal, params.id!, body),
  ),
);
