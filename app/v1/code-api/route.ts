import { codeApiInput } from "@/contracts/connections";
import { guard } from "@/server/api/access";
import { parseInput, queryInput, rest } from "@/server/http/rest";
import { codeApi } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/code-api", ({ ctx, query }) => codeApi(ctx, parseInput(codeApiInput, queryInput(query)))),
);
