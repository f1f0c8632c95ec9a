import { rest } from "@/server/http/rest";
import { listDecisions } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx, query }) =>
  listDecisions(ctx, { status: query.get("status") ?? undefined, chatId: query.get("chatId") ?? undefined }),
);
