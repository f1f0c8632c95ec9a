/**
 * Enforces the access table (contracts/access.ts): tRPC checks a procedure's row before it runs (a
 * procedure missing from the table is refused, so a new one cannot ship unguarded) and every REST route
 * wraps its handler in `guard` with its row. The services behind both adapters check the same
 * permissions again, with finer rules (the chat's owner, a shared chat, a tool's policy) on top.
 * `test/server/access.test.ts` calls every procedure, `test/e2e/security-authz.spec.ts` every route.
 */
import "server-only";
import { type Access, REST_ACCESS, type RestRoute, TRPC_ACCESS } from "@/contracts/access";
import type { RestArgs } from "../http/rest";
import { type Principal, requirePermission } from "../services/auth";
import { AppError } from "../services/errors";

export { REST_ACCESS, TRPC_ACCESS };

function enforce(rule: Access, principal: Principal | null): void {
  if (rule === "public") return;
  for (const permission of rule) requirePermission(principal, permission);
}

/** Enforces a procedure's row of the table; a procedure without a row is refused (fail closed). */
export function checkProcedureAccess(path: string, principal: Principal | null): void {
  const rule = TRPC_ACCESS[path];
  if (rule === undefined)
    throw new AppError("FORBIDDEN", `The procedure ${path} has no access rule, so nobody may call it.`);
  enforce(rule, principal);
}

/** Wraps a REST handler so its row of the table is checked before it runs: `rest(guard("GET /v1/chats", …))`. */
export function guard<P extends Record<string, string | string[]> = Record<string, string>>(
  route: RestRoute,
  handler: (args: RestArgs<P>) => Promise<unknown>,
): (args: RestArgs<P>) => Promise<unknown> {
  const rule: Access = REST_ACCESS[route];
  return async (args) => {
    enforce(rule, args.ctx.principal);
    return handler(args);
  };
}
