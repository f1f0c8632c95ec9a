/**
 * People and their API keys, managed by admins. A key's token is returned once; only its hash is stored,
 * and neither leaves this module again. Revoking a key ends it and every web session signed in with it
 * at once (auth.ts checks `revoked_at` on every request), refused where it would lock the admins out.
 */
import "server-only";
import type { ApiKeyIdInput, ApiKeyView, CreateApiKeyInput, CreateUserInput, Role } from "@/contracts/people";
import { PERMISSIONS, type Permission } from "@/contracts/permissions";
import { sha256 } from "../crypto";
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

interface KeyRow {
  id: string;
  name: string;
  user_id: string;
  user_name: string;
  role: Role;
  permissions: string;
  created_at: string | number;
  revoked_at: string | number | null;
}

/** Every column a view needs, and nothing secret: the token hash is compared in SQL, never selected. */
const KEY_COLUMNS = "k.id, k.name, k.user_id, u.name as user_name, u.role, k.permissions, k.created_at, k.revoked_at";
const KEY_FROM = "from api_keys k join users u on u.id = k.user_id";

function permissionsOf(row: Pick<KeyRow, "permissions">): Permission[] {
  const listed = JSON.parse(row.permissions) as unknown;
  return Array.isArray(listed) ? PERMISSIONS.filter((p) => listed.includes(p)) : [];
}

function toView(row: KeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    userId: row.user_id,
    userName: row.user_name,
    role: row.role,
    permissions: permissionsOf(row),
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** A key that lets an admin administer: an admin's key listing platform.admin (auth.ts cuts it by role). */
const administers = (row: Pick<KeyRow, "role" | "permissions">) =>
  row.role === "admin" && permissionsOf(row).includes("platform.admin");

/** Every key, oldest first, revoked ones included (with `revokedAt`). */
export async function listApiKeys(ctx: ServiceContext): Promise<ApiKeyView[]> {
  requirePermission(ctx.principal, "platform.admin");
  const rows = await ctx.platform.db.query<KeyRow>(`select ${KEY_COLUMNS} ${KEY_FROM} order by k.created_at, k.id`);
  return rows.map(toView);
}

/** Revocations take turns (a transaction-scoped advisory lock), so two at once cannot both pass the last-admin check. */
const REVOKE_LOCK = 7_061_626_002;

/**
 * Revokes a key: it and every web session signed in with it stop working on the next request, on every
 * instance. Revoking a revoked key answers its view again. Refused (CONFLICT, `details.reason`):
 * the key OPENBOT_ADMIN_TOKEN names (`admin_token_env`: the next start would insert it again and fail on
 * its duplicate hash), and the last working key with platform.admin of an admin (`last_admin_key`).
 */
export async function revokeApiKey(ctx: ServiceContext, input: ApiKeyIdInput): Promise<ApiKeyView> {
  requirePermission(ctx.principal, "platform.admin");
  const envToken = ctx.platform.env.OPENBOT_ADMIN_TOKEN;
  return ctx.platform.db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [REVOKE_LOCK]);
    const [row] = await tx.query<KeyRow & { from_env: boolean }>(
      `select ${KEY_COLUMNS}, k.token_hash = $2 as from_env ${KEY_FROM} where k.id = $1`,
      [input.id, envToken ? sha256(envToken) : ""],
    );
    if (!row) throw new AppError("NOT_FOUND", "No such API key.");
    if (row.revoked_at !== null) return toView(row);
    if (row.from_env)
      throw new AppError(
        "CONFLICT",
        "This key is the OPENBOT_ADMIN_TOKEN the server was started with, and the next start would add it again " +
          "(and fail on the duplicate). Change or unset OPENBOT_ADMIN_TOKEN and restart instead; the old key can then be revoked.",
        { reason: "admin_token_env" },
      );
    if (administers(row)) {
      const others = await tx.query<Pick<KeyRow, "role" | "permissions">>(
        `select u.role, k.permissions from api_keys k join users u on u.id = k.user_id
         where u.role = 'admin' and k.revoked_at is null and k.id <> $1`,
        [row.id],
      );
      if (!others.some(administers))
        throw new AppError(
          "CONFLICT",
          "This is the last working key with platform.admin of an admin: revoking it would lock every admin out. " +
            "Create another admin key with platform.admin first.",
          { reason: "last_admin_key" },
        );
    }
    const revokedAt = Date.now();
    await tx.query("update api_keys set revoked_at = $1 where id = $2", [revokedAt, row.id]);
    // Already refused by auth.ts (it joins the key); deleted so no dead session lingers.
    await tx.query("delete from web_sessions where api_key_id = $1", [row.id]);
    return toView({ ...row, revoked_at: revokedAt });
  });
}
