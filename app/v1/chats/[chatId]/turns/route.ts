import { sendTurnInput } from "@/contracts/chats";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { runTurnToEnd } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
/** Runs a turn for integrations (programs run on the server runner) and answers with the turn. */
export const POST = rest(
  guard("POST /v1/chats/[chatId]/turns", ({ ctx, params, body }) =>
    runTurnToEnd(ctx, parseInput(sendTurnInput, withBody(body, { chatId: params.chatId }))),
  ),
);
