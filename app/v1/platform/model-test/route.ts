import { modelPatchSchema } from "@/contracts/settings";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { testModelConnection } from "@/server/services/agent/models";

export const dynamic = "force-dynamic";

const isEmptyObject = (body: unknown): boolean =>
  body === null ||
  body === undefined ||
  (typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0);
/** Body `{provider, baseURL?, model, apiKey?}` tests that model unsaved; no body (or `{}`) tests the saved one. */
export const POST = rest(
  guard("POST /v1/platform/model-test", ({ ctx, body }) =>
    testModelConnection(ctx, parseInput(modelPatchSchema.optional(), isEmptyObject(body) ? undefined : body)),
  ),
);
