import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { revokeGrant } from "@/server/services/grants";

export const dynamic = "force-dynamic";
export const DELETE = rest(guard("DELETE /v1/grants/[id]", ({ ctx, params }) => revokeGrant(ctx, { id: params.id })));
