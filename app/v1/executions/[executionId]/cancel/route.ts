import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { cancelExecution } from "@/server/services/executions";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/executions/[executionId]/cancel", ({ ctx, params }) => cancelExecution(ctx, params.executionId!)),
);
