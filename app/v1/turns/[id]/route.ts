import { rest } from "@/server/http/rest";
import { getTurn } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx, params }) => getTurn(ctx, params.id!));
