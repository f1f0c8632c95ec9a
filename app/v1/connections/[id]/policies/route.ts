import { policiesPatchSchema } from "@/contracts/connections";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { setPolicies } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const PATCH = rest(
  guard("PATCH /v1/connections/[id]/policies", ({ ctx, params, body }) =>
    setPolicies(ctx, { id: params.id!, policies: parseInput(policiesPatchSchema, body) }),
  ),
);
