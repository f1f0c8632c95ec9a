import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { stopTurn } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
export const POST = rest(guard("POST /v1/turns/[id]/stop", ({ ctx, params }) => stopTurn(ctx, params.id!)));
