import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { getSettings, updateSettings } from "@/server/services/settings";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/platform/settings", ({ ctx }) => getSettings(ctx.platform.db, ctx.principal)));
export const PATCH = rest(
  guard("PATCH /v1/platform/settings", ({ ctx, body }) =>
    updateSettings(ctx.platform.db, ctx.principal, body, ctx.platform.seal),
  ),
);
