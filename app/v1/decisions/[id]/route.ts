import { rest } from "@/server/http/rest";
import { decide } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx, params, body }) => decide(ctx, params.id!, body));
