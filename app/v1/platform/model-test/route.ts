import { rest } from "@/server/http/rest";
import { testModelConnection } from "@/server/services/agent/models";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx }) => testModelConnection(ctx.platform, ctx.principal));
