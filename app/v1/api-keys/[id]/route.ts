import { apiKeyIdInput } from "@/contracts/people";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { revokeApiKey } from "@/server/services/people";

export const dynamic = "force-dynamic";
/** Revokes the key at once (again: its view, unchanged); answers the key's view. */
export const DELETE = rest(
  guard("DELETE /v1/api-keys/[id]", ({ ctx, params }) =>
    revokeApiKey(ctx, parseInput(apiKeyIdInput, { id: params.id })),
  ),
);
