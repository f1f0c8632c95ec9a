import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { getRun } from "@/server/services/code-runs/records";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/code-runs/[id]", ({ ctx, params }) => getRun(ctx, params.id!)));
