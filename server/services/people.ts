/**
 * People and their API keys, managed by admins. A key's token is returned once; only its hash is stored.
 */
import "server-only";
import type { CreateApiKeyInput, CreateUserInput } from "@/contracts/people";
import { createApiKey, createUser, ROLE_PERMISSIONS, requirePermission } from "./auth";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";

export async function addUser(ctx: ServiceContext, input: CreateUserInput): Promise<{ id: string }> {
  requirePermission(ctx.principal, "platform.admin");
  return { id: await createUser(ctx.platform.db, input.name, input.role) };
}

export async function addApiKey(ctx: ServiceContext, input: CreateApiKeyInput): Promise<{ id: string; token: string }> {
  requirePermission(ctx.principal, "platform.admin");
  const { db } = ctx.platform;
  const users = await db.query<{ role: "admin" | "member" }>("select role from users where id = $1", [input.userId]);
  if (!users[0]) throw new AppError("BAD_REQUEST", "userId: no such user");
  const beyond = input.permissions.filter((p) => !ROLE_PERMISSIONS[users[0]!.role].includes(p));
  if (beyond.length)
    throw new AppError("BAD_REQUEST", `permissions: a ${users[0].role} cannot hold ${beyond.join(", ")}`);
  return createApiKey(db, input.userId, input.name, input.permissions);
}

export async function listUsers(ctx: ServiceContext) {
  requirePermission(ctx.principal, "platform.admin");
  const rows = await ctx.platform.db.query<{ id: string; name: string; role: string; created_at: string }>(
    "select id, name, role, created_at from users order by created_at",
  );
  return rows.map((r) => ({ id: r.id, name: r.name, role: r.role, createdAt: Number(r.created_at) }));
}
