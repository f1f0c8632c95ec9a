import { rest } from "@/server/http/rest";
import { listRuns, runOnServer } from "@/server/services/code-runs";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx, params }) => listRuns(ctx, params.chatId!));
export const POST = rest(({ ctx, params, body }) =>
  runOnServer(ctx, { ...(typeof body === "object" && body !== null ? body : {}), chatId: params.chatId }),
);
