import { reconcileInput } from "@/contracts/reconcile";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { reconcileCall } from "@/server/services/code-runs/reconcile";
import { AppError } from "@/server/services/errors";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/code-runs/[id]/calls/[index]/reconcile", ({ ctx, params, body }) => {
    const index = Number(params.index);
    if (!Number.isInteger(index) || index < 0)
      throw new AppError("BAD_REQUEST", "index: must be a call's index (a whole number from 0)");
    return reconcileCall(ctx, params.id!, index, parseInput(reconcileInput, body));
  }),
);
