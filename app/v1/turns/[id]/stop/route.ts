import { rest } from "@/server/http/rest";
import { stopTurn } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx, params }) => stopTurn(ctx, params.id!));
