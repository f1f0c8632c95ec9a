import { rest } from "@/server/http/rest";
import { removeVaultEntry, rotateVaultEntry } from "@/server/services/vault";

export const dynamic = "force-dynamic";
const nameOf = (params: Record<string, string | string[]>) => ([] as string[]).concat(params.name ?? []).join("/");
/** Rotates the entry's secret in place: `{ secret, allow? }`. */
export const PUT = rest(({ ctx, params, body }) => rotateVaultEntry(ctx.platform, ctx.principal, nameOf(params), body));
export const DELETE = rest(({ ctx, params }) => removeVaultEntry(ctx.platform, ctx.principal, nameOf(params)));
