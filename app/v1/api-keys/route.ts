import { createApiKeyInput } from "@/contracts/people";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { addApiKey, listApiKeys } from "@/server/services/people";

export const dynamic = "force-dynamic";
/** Every key (never its token or hash), revoked ones with `revokedAt`. */
export const GET = rest(guard("GET /v1/api-keys", ({ ctx }) => listApiKeys(ctx)));
export const POST = rest(
  guard("POST /v1/api-keys", ({ ctx, body }) => addApiKey(ctx, parseInput(createApiKeyInput, body))),
  { status: 201 },
);
