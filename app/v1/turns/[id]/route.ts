import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { getTurn } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/turns/[id]", ({ ctx, params }) => getTurn(ctx, params.id!)));
