import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { listRuns } from "@/server/services/code-runs/records";

export const dynamic = "force-dynamic";
/** Alias of /v1/chats/:chatId/code-runs (seed 000 called chats sessions). */
export const GET = rest(
  guard("GET /v1/sessions/[sessionId]/code-runs", ({ ctx, params }) => listRuns(ctx, params.sessionId!)),
);
