import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { addUser, listUsers } from "@/server/services/people";

export const dynamic = "force-dynamic";
export const GET = rest(guard("GET /v1/users", ({ ctx }) => listUsers(ctx.platform.db, ctx.principal)));
export const POST = rest(
  guard("POST /v1/users", ({ ctx, body }) => addUser(ctx.platform.db, ctx.principal, body)),
  { status: 201 },
);
