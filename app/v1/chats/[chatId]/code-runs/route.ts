import { startRunInput } from "@/contracts/code-run";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { listRuns } from "@/server/services/code-runs/records";
import { runOnServerOnce } from "@/server/services/idempotency";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/chats/[chatId]/code-runs", ({ ctx, params }) => listRuns(ctx, params.chatId!)));
/** With an `Idempotency-Key` header a retry returns the run the first request made. */
export const POST = rest(
  guard("POST /v1/chats/[chatId]/code-runs", ({ ctx, req, params, body }) =>
    runOnServerOnce(
      ctx,
      parseInput(startRunInput, withBody(body, { chatId: params.chatId })),
      req.headers.get("idempotency-key"),
    ),
  ),
);
