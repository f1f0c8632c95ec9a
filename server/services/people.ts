/**
 * People and their API keys, managed by admins. A key's token is returned once; only its hash is stored.
 */
import "server-only";
import { z } from "zod";
import { PERMISSIONS } from "@/contracts/permissions";
import { plainName } from "@/contracts/text";
import type { Db } from "../db/client";
import { createApiKey, createUser, type Principal, ROLE_PERMISSIONS, requirePermission } from "./auth";
import { AppError, invalidInput } from "./errors";

const userInput = z.object({
  name: plainName("name", 100),
  role: z.enum(["admin", "member"], { error: 'role must be "admin" or "member"' }),
});

const keyInput = z.object({
  userId: z.string({ error: "userId is required" }).min(1, "userId is required"),
  name: plainName("name", 100),
  permissions: z.array(z.enum(PERMISSIONS, { error: `permissions must be among ${PERMISSIONS.join(", ")}` })),
});

export async function addUser(db: Db, principal: Principal | null, input: unknown): Promise<{ id: string }> {
  requirePermission(principal, "platform.admin");
  const parsed = userInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  return { id: await createUser(db, parsed.data.name, parsed.data.role) };
}

export async function addApiKey(
  db: Db,
  principal: Principal | null,
  input: unknown,
): Promise<{ id: string; token: string }> {
  requirePermission(principal, "platform.admin");
  const parsed = keyInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const users = await db.query<{ role: "admin" | "member" }>("select role from users where id = $1", [
    parsed.data.userId,
  ]);
  if (!users[0]) throw new AppError("BAD_REQUEST", "userId: no such user");
  const beyond = parsed.data.permissions.filter((p) => !ROLE_PERMISSIONS[users[0]!.role].includes(p));
  if (beyond.length)
    throw new AppError("BAD_REQUEST", `permissions: a ${users[0].role} cannot hold ${beyond.join(", ")}`);
  return createApiKey(db, parsed.data.userId, parsed.data.name, parsed.data.permissions);
}

export async function listUsers(db: Db, principal: Principal | null) {
  requirePermission(principal, "platform.admin");
  const rows = await db.query<{ id: string; name: string; role: string; created_at: string }>(
    "select id, name, role, created_at from users order by created_at",
  );
  return rows.map((r) => ({ id: r.id, name: r.name, role: r.role, createdAt: Number(r.created_at) }));
}
