import { appInputAnswer } from "@/contracts/app-operations";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { answerPendingInput } from "@/server/services/app-operations";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/app-operations/[id]/input", ({ ctx, params, body }) =>
    answerPendingInput(ctx, { operationId: params.id!, answer: parseInput(appInputAnswer, body) }),
  ),
);
