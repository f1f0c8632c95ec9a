import { decideManyInput, listDecisionsInput } from "@/contracts/decisions";
import { guard } from "@/server/api/access";
import { parseInput, queryInput, rest } from "@/server/http/rest";
import { decideMany, listDecisions } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/decisions", ({ ctx, query }) => listDecisions(ctx, parseInput(listDecisionsInput, queryInput(query)))),
);
/** `{ items: [{ id, decision }] }`: all of them, or none. */
export const POST = rest(
  guard("POST /v1/decisions", ({ ctx, body }) => decideMany(ctx, parseInput(decideManyInput, body))),
);
