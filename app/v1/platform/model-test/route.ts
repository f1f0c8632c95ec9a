import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { testModelConnection } from "@/server/services/agent/models";

export const dynamic = "force-dynamic";
export const POST = rest(guard("POST /v1/platform/model-test", ({ ctx }) => testModelConnection(ctx.platform, ctx.principal)));
