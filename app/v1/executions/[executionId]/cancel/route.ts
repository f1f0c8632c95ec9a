import { rest } from "@/server/http/rest";
import { cancelExecution } from "@/server/services/executions";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx, params }) => cancelExecution(ctx, params.executionId!));
