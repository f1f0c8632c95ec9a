import { rest } from "@/server/http/rest";
import { answerPendingInput } from "@/server/services/app-operations";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx, params, body }) => answerPendingInput(ctx, params.id!, body));
