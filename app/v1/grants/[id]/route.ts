import { grantIdInput } from "@/contracts/grants";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { revokeGrant } from "@/server/services/grants";

export const dynamic = "force-dynamic";
export const DELETE = rest(
  guard("DELETE /v1/grants/[id]", ({ ctx, params }) => revokeGrant(ctx, parseInput(grantIdInput, { id: params.id }))),
);
