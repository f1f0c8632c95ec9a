import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { listGrants } from "@/server/services/grants";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/grants", ({ ctx, query }) =>
    listGrants(ctx, {
      chatId: query.get("chatId") ?? undefined,
      runId: query.get("runId") ?? undefined,
      all: query.has("all") ? query.get("all") === "true" : undefined,
    }),
  ),
);
