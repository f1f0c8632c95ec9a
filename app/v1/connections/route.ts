import { addConnectionInput } from "@/contracts/connections";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { addConnection, listConnections } from "@/server/services/connections";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/connections", async ({ ctx }) => listConnections(ctx)));
export const POST = rest(
  guard("POST /v1/connections", ({ ctx, body }) => addConnection(ctx, parseInput(addConnectionInput, body))),
  { status: 201 },
);
