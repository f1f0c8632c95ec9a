import { modelPatchSchema } from "@/contracts/settings";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { testModelConnection } from "@/server/services/agent/models";

export const dynamic = "force-dynamic";
/** Body `{provider, baseURL?, model, apiKey?}` tests that model unsaved; no body tests the saved one. */
export const POST = rest(
  guard("POST /v1/platform/model-test", ({ ctx, body }) =>
    testModelConnection(ctx, parseInput(modelPatchSchema.optional(), body ?? undefined)),
  ),
);
