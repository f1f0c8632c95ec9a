import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { listPendingInputs } from "@/server/services/app-operations";
import { AppError } from "@/server/services/errors";

export const dynamic = "force-dynamic";
/** `?chatId=…`: App operations of the chat that wait for a person's input. */
export const GET = rest(
  guard("GET /v1/app-operations", ({ ctx, query }) => {
    const chatId = query.get("chatId");
    if (!chatId) throw new AppError("BAD_REQUEST", "chatId: required");
    return listPendingInputs(ctx, chatId);
  }),
);
