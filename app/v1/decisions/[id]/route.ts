import { decisionItem } from "@/contracts/decisions";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { decide } from "@/server/services/decisions";

export const dynamic = "force-dynamic";
export const POST = rest(
  guard("POST /v1/decisions/[id]", ({ ctx, params, body }) =>
    decide(ctx, parseInput(decisionItem, withBody(body, { id: params.id }))),
  ),
);
