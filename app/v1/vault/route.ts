import { createVaultInput } from "@/contracts/vault";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { addVaultEntry, listVault } from "@/server/services/vault";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/vault", ({ ctx }) => listVault(ctx)));
export const POST = rest(
  guard("POST /v1/vault", ({ ctx, body }) => addVaultEntry(ctx, parseInput(createVaultInput, body))),
  { status: 201 },
);
