import { listGrantsInput } from "@/contracts/grants";
import { guard } from "@/server/api/access";
import { parseInput, queryInput, rest } from "@/server/http/rest";
import { listGrants } from "@/server/services/grants";

export const dynamic = "force-dynamic";
export const GET = rest(
  guard("GET /v1/grants", ({ ctx, query }) => {
    const { all, ...rest } = queryInput(query);
    return listGrants(
      ctx,
      parseInput(listGrantsInput, { ...rest, ...(all === undefined ? {} : { all: all === "true" }) }),
    );
  }),
);
