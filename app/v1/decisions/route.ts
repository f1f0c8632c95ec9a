import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { decideMany, listDecisions } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/decisions", ({ ctx, query }) =>
    listDecisions(ctx, {
      status: query.get("status") ?? undefined,
      chatId: query.get("chatId") ?? undefined,
      runId: query.get("runId") ?? undefined,
    }),
  ),
);
/** `{ items: [{ id, decision }] }`: all of them, or none. */
export const POST = rest(guard("POST /v1/decisions", ({ ctx, body }) => decideMany(ctx, body)));
