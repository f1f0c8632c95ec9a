import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { listRuns, runOnServer } from "@/server/services/code-runs";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/chats/[chatId]/code-runs", ({ ctx, params }) => listRuns(ctx, params.chatId!)));
export const POST = rest(
  guard("POST /v1/chats/[chatId]/code-runs", ({ ctx, params, body }) =>
    runOnServer(ctx, { ...(typeof body === "object" && body !== null ? body : {}), chatId: params.chatId }),
  ),
);
