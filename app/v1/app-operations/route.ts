import { pendingInputsQuery } from "@/contracts/app-operations";
import { guard } from "@/server/api/access";
import { parseInput, queryInput, rest } from "@/server/http/rest";
import { listPendingInputs } from "@/server/services/app-operations";

export const dynamic = "force-dynamic";
/** `?chatId=…`: App operations of the chat that wait for a person's input. */
export const GET = rest(
  guard("GET /v1/app-operations", ({ ctx, query }) =>
    listPendingInputs(ctx, parseInput(pendingInputsQuery, queryInput(query)).chatId),
  ),
);
