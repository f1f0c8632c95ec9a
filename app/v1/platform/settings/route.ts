import { rest } from "@/server/http/rest";
import { getSettings, updateSettings } from "@/server/services/settings";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx }) => getSettings(ctx.platform.db, ctx.principal));
export const PATCH = rest(({ ctx, body }) => updateSettings(ctx.platform.db, ctx.principal, body, ctx.platform.seal));
