import { rest } from "@/server/http/rest";
import { removeConnection, updateConnection } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const PATCH = rest(({ ctx, params, body }) => updateConnection(ctx.platform, ctx.principal, params.id!, body));
export const DELETE = rest(({ ctx, params }) => removeConnection(ctx.platform, ctx.principal, params.id!));
