import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { getExecution } from "@/server/services/executions";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/executions/[executionId]", ({ ctx, params }) => getExecution(ctx, params.executionId!)),
);
