import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { addVaultEntry, listVault } from "@/server/services/vault";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/vault", ({ ctx }) => listVault(ctx.platform, ctx.principal)));
export const POST = rest(
  guard("POST /v1/vault", ({ ctx, body }) => addVaultEntry(ctx.platform, ctx.principal, body)),
  { status: 201 },
);
