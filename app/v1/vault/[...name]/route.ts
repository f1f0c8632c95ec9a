import { rotateVaultInput, vaultAccessInput, vaultEntryInput } from "@/contracts/vault";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { removeVaultEntry, rotateVaultEntry, setVaultAccess } from "@/server/services/vault";

export const dynamic = "force-dynamic";
type NameParams = { name: string[] };
const nameOf = (params: NameParams) => params.name.join("/");
/** Rotates the entry's secret in place: `{ secret, allow?, usableBy? }`. */
export const PUT = rest<NameParams>(
  guard<NameParams>("PUT /v1/vault/[...name]", ({ ctx, params, body }) =>
    rotateVaultEntry(ctx, parseInput(rotateVaultInput, withBody(body, { name: nameOf(params) }))),
  ),
);
/** Sets who may use the entry: `{ usableBy: { users?, roles? } }`. */
export const PATCH = rest<NameParams>(
  guard<NameParams>("PATCH /v1/vault/[...name]", ({ ctx, params, body }) =>
    setVaultAccess(ctx, parseInput(vaultAccessInput, withBody(body, { name: nameOf(params) }))),
  ),
);
export const DELETE = rest<NameParams>(
  guard<NameParams>("DELETE /v1/vault/[...name]", ({ ctx, params }) =>
    removeVaultEntry(ctx, parseInput(vaultEntryInput, { name: nameOf(params) })),
  ),
);
