import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { cancelRun } from "@/server/services/code-runs/runs";

export const dynamic = "force-dynamic";
export const POST = rest(guard("POST /v1/code-runs/[id]/cancel", ({ ctx, params }) => cancelRun(ctx, params.id!)));
