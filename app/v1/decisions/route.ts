import { listDecisionsInput } from "@/contracts/decisions";
import { guard } from "@/server/api/access";
import { parseInput, queryInput, rest } from "@/server/http/rest";
import { listDecisions } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/decisions", ({ ctx, query }) => listDecisions(ctx, parseInput(listDecisionsInput, queryInput(query)))),
);
