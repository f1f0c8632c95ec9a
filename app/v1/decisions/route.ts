import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { listDecisions } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/decisions", ({ ctx, query }) =>
    listDecisions(ctx, { status: query.get("status") ?? undefined, chatId: query.get("chatId") ?? undefined }),
  ),
);
