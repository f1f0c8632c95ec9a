/**
 * People and their API keys, managed by admins. A key's token is returned once; only its hash is stored,
 * and neither leaves this module again. Revoking a key ends it and every web session signed in with it
 * at once (auth.ts checks `revoked_at` on every request), refused where it would lock the admins out.
 * A person's role can change (their keys act with what the new role allows, from the next request on),
 * and a person can be removed: their keys are revoked, their sessions end, their running turns stop and
 * their live runs are cancelled; their row stays, so the records that name them still do.
 */
import "server-only";
import { LIVE_RUN_STATUSES_SQL } from "@/contracts/code-run";
import type {
  ApiKeyIdInput,
  ApiKeyView,
  CreateApiKeyInput,
  CreateUserInput,
  Role,
  UpdateUserInput,
  UserIdInput,
  UserView,
} from "@/contracts/people";
import { PERMISSIONS, type Permission } from "@/contracts/permissions";
import { sha256 } from "../crypto";
import type { Db } from "../db/client";
import { logEvent } from "../log";
import { createApiKey, createUser, personWhoBelongs, ROLE_PERMISSIONS, requirePermission } from "./auth";
import { failRun } from "./code-runs/endings";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";

/**
 * Adds a person. Names are how pages, decisions and grants show people, so two people who belong may not
 * share one (letter case and surrounding spaces aside): CONFLICT `name_taken`, naming the field. A removed
 * person's name is free again. Adds take turns with changes and removals (REVOKE_LOCK), so two at once
 * cannot both take a name.
 */
export async function addUser(ctx: ServiceContext, input: CreateUserInput): Promise<{ id: string }> {
  requirePermission(ctx.principal, "platform.admin");
  const id = await ctx.platform.db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [REVOKE_LOCK]);
    const [taken] = await tx.query<{ name: string; role: Role }>(
      "select name, role from users where lower(name) = lower($1) and removed_at is null limit 1",
      [input.name],
    );
    if (taken) {
      const message = `a person named ${taken.name} (${taken.role}) already exists: choose a name that tells them apart`;
      throw new AppError("CONFLICT", `name: ${message}`, {
        reason: "name_taken",
        fields: [{ field: "name", message }],
      });
    }
    return createUser(tx, input.name, input.role);
  });
  return { id };
}

export async function addApiKey(ctx: ServiceContext, input: CreateApiKeyInput): Promise<{ id: string; token: string }> {
  requirePermission(ctx.principal, "platform.admin");
  const { db } = ctx.platform;
  const { role } = await personWhoBelongs(db, input.userId);
  const beyond = input.permissions.filter((p) => !ROLE_PERMISSIONS[role].includes(p));
  if (beyond.length) throw new AppError("BAD_REQUEST", `permissions: a ${role} cannot hold ${beyond.join(", ")}`);
  return createApiKey(db, input.userId, input.name, input.permissions);
}

interface UserRow {
  id: string;
  name: string;
  role: Role;
  created_at: string | number;
  removed_at: string | number | null;
  /** Only where selected (listUsers); a person personToChange let through does not hold it. */
  holds_admin_token?: boolean;
}

const USER_COLUMNS = "id, name, role, created_at, removed_at";

const toUserView = (r: UserRow): UserView => ({
  id: r.id,
  name: r.name,
  role: r.role,
  createdAt: Number(r.created_at),
  removedAt: r.removed_at === null ? null : Number(r.removed_at),
  holdsAdminToken: r.holds_admin_token === true,
});

/**
 * The hash of the token OPENBOT_ADMIN_TOKEN names on this instance ("" without one, which no key has), to
 * compare with `api_keys.token_hash` in SQL: the hashes themselves are never selected.
 */
const envTokenHash = (ctx: ServiceContext) => {
  const token = ctx.platform.env.OPENBOT_ADMIN_TOKEN;
  return token ? sha256(token) : "";
};

/** Everyone, oldest first, removed people included (with `removedAt`: records still name them). */
export async function listUsers(ctx: ServiceContext): Promise<UserView[]> {
  requirePermission(ctx.principal, "platform.admin");
  const rows = await ctx.platform.db.query<UserRow>(
    `select ${USER_COLUMNS}, exists (select 1 from api_keys k
       where k.user_id = users.id and k.revoked_at is null and k.token_hash = $1) as holds_admin_token
     from users order by created_at, id`,
    [envTokenHash(ctx)],
  );
  return rows.map(toUserView);
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
  /** Whether it is the key OPENBOT_ADMIN_TOKEN names (compared in SQL: see envTokenHash). */
  from_env: boolean;
}

/**
 * Every column a view needs, and nothing secret: the token hash is compared in SQL, never selected. `$1`
 * is always envTokenHash.
 */
const KEY_COLUMNS =
  "k.id, k.name, k.user_id, u.name as user_name, u.role, k.permissions, k.created_at, k.revoked_at, k.token_hash = $1 as from_env";
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
    fromEnv: row.from_env,
  };
}

/** A key that lets an admin administer: an admin's key listing platform.admin (auth.ts cuts it by role). */
const administers = (row: Pick<KeyRow, "role" | "permissions">) =>
  row.role === "admin" && permissionsOf(row).includes("platform.admin");

/** Every key, oldest first, revoked ones included (with `revokedAt`). */
export async function listApiKeys(ctx: ServiceContext): Promise<ApiKeyView[]> {
  requirePermission(ctx.principal, "platform.admin");
  const rows = await ctx.platform.db.query<KeyRow>(`select ${KEY_COLUMNS} ${KEY_FROM} order by k.created_at, k.id`, [
    envTokenHash(ctx),
  ]);
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
  return ctx.platform.db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [REVOKE_LOCK]);
    const [row] = await tx.query<KeyRow>(`select ${KEY_COLUMNS} ${KEY_FROM} where k.id = $2`, [
      envTokenHash(ctx),
      input.id,
    ]);
    if (!row) throw new AppError("NOT_FOUND", "No such API key.");
    if (row.revoked_at !== null) return toView(row);
    if (row.from_env)
      throw new AppError(
        "CONFLICT",
        "This key is the OPENBOT_ADMIN_TOKEN the server was started with, and the next start would add it again " +
          "(and fail on the duplicate). Change or unset OPENBOT_ADMIN_TOKEN and restart instead; the old key can then be revoked.",
        { reason: "admin_token_env" },
      );
    if (administers(row) && !(await adminKeyBesides(tx, { keyId: row.id })))
      throw new AppError(
        "CONFLICT",
        "This is the last working key with platform.admin of an admin: revoking it would lock every admin out. " +
          "Create another admin key with platform.admin first.",
        { reason: "last_admin_key" },
      );
    const revokedAt = Date.now();
    await tx.query("update api_keys set revoked_at = $1 where id = $2", [revokedAt, row.id]);
    // Already refused by auth.ts (it joins the key); deleted so no dead session lingers.
    await tx.query("delete from web_sessions where api_key_id = $1", [row.id]);
    return toView({ ...row, revoked_at: revokedAt });
  });
}

/** Whether an admin still has a working key with platform.admin besides one key, or besides one person's keys. */
async function adminKeyBesides(tx: Db, besides: { keyId: string } | { userId: string }): Promise<boolean> {
  const [column, value] = "keyId" in besides ? ["k.id", besides.keyId] : ["k.user_id", besides.userId];
  const others = await tx.query<Pick<KeyRow, "role" | "permissions">>(
    `select u.role, k.permissions from api_keys k join users u on u.id = k.user_id
     where u.role = 'admin' and u.removed_at is null and k.revoked_at is null and ${column} <> $1`,
    [value],
  );
  return others.some(administers);
}

/**
 * The person to change, locked against revocations and other changes (REVOKE_LOCK), with their working
 * keys. Refused (CONFLICT, `details.reason`): the caller themselves (`self`: another admin can, so nobody
 * locks themselves out by a slip), and the person holding the key OPENBOT_ADMIN_TOKEN names
 * (`admin_token_env`: that key is promised to administer for as long as it is set).
 */
async function personToChange(ctx: ServiceContext, tx: Db, id: string, doing: string) {
  const principal = requirePermission(ctx.principal, "platform.admin");
  await tx.query("select pg_advisory_xact_lock($1)", [REVOKE_LOCK]);
  const [user] = await tx.query<UserRow>(`select ${USER_COLUMNS} from users where id = $1`, [id]);
  if (!user) throw new AppError("NOT_FOUND", "No such person.");
  if (user.removed_at !== null) return { user, keys: [] };
  if (user.id === principal.userId)
    throw new AppError("CONFLICT", `You cannot ${doing} yourself; another admin can.`, { reason: "self" });
  const keys = await tx.query<KeyRow>(
    `select ${KEY_COLUMNS} ${KEY_FROM} where k.user_id = $2 and k.revoked_at is null`,
    [envTokenHash(ctx), id],
  );
  if (keys.some((k) => k.from_env))
    throw new AppError(
      "CONFLICT",
      `${user.name} holds the key OPENBOT_ADMIN_TOKEN names, which stays an admin key for as long as the server is ` +
        "started with it. Change or unset OPENBOT_ADMIN_TOKEN and restart first.",
      { reason: "admin_token_env" },
    );
  return { user, keys };
}

const lockoutError = (doing: string) =>
  new AppError(
    "CONFLICT",
    `This person holds the last working key with platform.admin of an admin: ${doing} them would lock every ` +
      "admin out. Create another admin key with platform.admin first.",
    { reason: "last_admin_key" },
  );

/**
 * Changes a person's role. Their keys keep the permissions they were created with, cut to what the new role
 * allows from the next request on (auth.ts), so a demoted admin's sessions lose platform.admin at once and a
 * promoted member's keys gain nothing (a key for admin work is created for them afterwards). Refused for a
 * removed person (CONFLICT `removed`) and as personToChange says; demoting the last admin who can
 * administer is refused (`last_admin_key`).
 */
export async function updateUser(ctx: ServiceContext, input: UpdateUserInput): Promise<UserView> {
  const user = await ctx.platform.db.transaction(async (tx) => {
    const { user } = await personToChange(ctx, tx, input.id, "change the role of");
    if (user.removed_at !== null)
      throw new AppError("CONFLICT", `${user.name} was removed; add them as a new person instead.`, {
        reason: "removed",
      });
    if (user.role === input.role) return user;
    if (input.role !== "admin" && !(await adminKeyBesides(tx, { userId: user.id }))) throw lockoutError("demoting");
    await tx.query("update users set role = $1 where id = $2", [input.role, user.id]);
    return { ...user, role: input.role };
  });
  logEvent("person_role_changed", { userId: user.id, role: user.role });
  return toUserView(user);
}

/**
 * Removes a person: in one transaction they are marked removed, every key of theirs is revoked, their web
 * sessions and the chats shared with them end; then their running turns stop and their live runs are
 * cancelled (on whichever instance hosts them). Their row, chats, runs and grants stay, so every record that
 * names them still does. Removing a removed person answers their view again. Refused as personToChange
 * says, and for the last admin who can administer (`last_admin_key`).
 */
export async function removeUser(ctx: ServiceContext, input: UserIdInput): Promise<UserView> {
  const { db, events } = ctx.platform;
  const { user, keyIds } = await db.transaction(async (tx) => {
    const { user, keys } = await personToChange(ctx, tx, input.id, "remove");
    if (user.removed_at !== null) return { user, keyIds: [] as string[] };
    if (keys.some(administers) && !(await adminKeyBesides(tx, { userId: user.id }))) throw lockoutError("removing");
    const removedAt = Date.now();
    await tx.query("update users set removed_at = $1 where id = $2", [removedAt, user.id]);
    await tx.query("update api_keys set revoked_at = $1 where user_id = $2 and revoked_at is null", [
      removedAt,
      user.id,
    ]);
    const all = await tx.query<{ id: string }>("select id from api_keys where user_id = $1", [user.id]);
    const keyIds = all.map((k) => k.id);
    await tx.query("delete from web_sessions where api_key_id = any($1::text[])", [keyIds]);
    await tx.query("delete from chat_shares where user_id = $1", [user.id]);
    return { user: { ...user, removed_at: removedAt }, keyIds };
  });
  if (keyIds.length) {
    const turns = await db.query<{ id: string }>(
      "select id from turns where api_key_id = any($1::text[]) and status = 'Running'",
      [keyIds],
    );
    for (const t of turns) events.emit("turn-stop", { turnId: t.id });
    const runs = await db.query<{ id: string }>(
      `select id from code_runs where api_key_id = any($1::text[]) and status in ${LIVE_RUN_STATUSES_SQL}`,
      [keyIds],
    );
    for (const r of runs) {
      await failRun(ctx, r.id, "Cancelled", `The program was stopped: ${user.name} was removed.`, []);
      events.emit("run-cancel", { runId: r.id });
    }
    logEvent("person_removed", { userId: user.id, keys: keyIds.length, turns: turns.length, runs: runs.length });
  }
  return toUserView(user);
}
