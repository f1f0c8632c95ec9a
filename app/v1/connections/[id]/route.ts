import { connectionPatchSchema } from "@/contracts/connections";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { removeConnection, updateConnection } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const PATCH = rest(
  guard("PATCH /v1/connections/[id]", ({ ctx, params, body }) =>
    updateConnection(ctx, { id: params.id!, patch: parseInput(connectionPatchSchema, body ?? {}) }),
  ),
);
export const DELETE = rest(
  guard("DELETE /v1/connections/[id]", ({ ctx, params }) => removeConnection(ctx, params.id!)),
);
