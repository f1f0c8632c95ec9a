import { rest } from "@/server/http/rest";
import { getExecution } from "@/server/services/executions";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx, params }) => getExecution(ctx, params.executionId!));
