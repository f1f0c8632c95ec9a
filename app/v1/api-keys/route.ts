import { createApiKeyInput } from "@/contracts/people";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { addApiKey } from "@/server/services/people";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/api-keys", ({ ctx, body }) => addApiKey(ctx, parseInput(createApiKeyInput, body))),
  { status: 201 },
);
