import { rest } from "@/server/http/rest";
import { addVaultEntry, listVault } from "@/server/services/vault";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx }) => listVault(ctx.platform, ctx.principal));
export const POST = rest(({ ctx, body }) => addVaultEntry(ctx.platform, ctx.principal, body), { status: 201 });
