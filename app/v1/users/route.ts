import { createUserInput } from "@/contracts/people";
import { guard } from "@/server/api/access";
import { parseInput, rest } from "@/server/http/rest";
import { addUser, listUsers } from "@/server/services/people";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/users", ({ ctx }) => listUsers(ctx)));
export const POST = rest(
  guard("POST /v1/users", ({ ctx, body }) => addUser(ctx, parseInput(createUserInput, body))),
  { status: 201 },
);
