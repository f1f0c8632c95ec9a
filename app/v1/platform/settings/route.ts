import { settingsPatchSchema } from "@/contracts/settings";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { getSettings, updateSettings } from "@/server/services/settings";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/platform/settings", ({ ctx }) => getSettings(ctx)));
export const PATCH = rest(
  guard("PATCH /v1/platform/settings", ({ ctx, body }) => updateSettings(ctx, parseInput(settingsPatchSchema, body))),
);
