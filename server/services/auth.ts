/**
 * Who is calling. API keys (Bearer tokens) and the UI's session cookie resolve to the same Principal and
 * pass the same checks. Only hashes of tokens and session ids are stored.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Role } from "@/contracts/people";
import { ALL_PERMISSIONS, PERMISSIONS, type Permission } from "@/contracts/permissions";
import { randomToken, sha256 } from "../crypto";
import type { Db } from "../db/client";
import { AppError } from "./errors";
import { signInLimiter } from "./sign-in-limit";

export interface Principal {
  userId: string;
  userName: string;
  role: "admin" | "member";
  keyId: string;
  permissions: ReadonlySet<Permission>;
}

export const SESSION_COOKIE = "openbot_session";
const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

interface KeyRow {
  key_id: string;
  user_id: string;
  user_name: string;
  role: "admin" | "member";
  permissions: string;
}

/** What a role can ever hold: a member never holds platform.admin, whatever a key lists. */
export const ROLE_PERMISSIONS: Record<Principal["role"], readonly Permission[]> = {
  admin: ALL_PERMISSIONS,
  member: ALL_PERMISSIONS.filter((p) => p !== "platform.admin"),
};

/** A key holds exactly what it was created with, cut down to what its user's role allows now. */
function toPrincipal(row: KeyRow): Principal {
  const listed = JSON.parse(row.permissions) as unknown;
  const allowed = ROLE_PERMISSIONS[row.role] ?? [];
  const permissions = new Set<Permission>(Array.isArray(listed) ? allowed.filter((p) => listed.includes(p)) : []);
  return { userId: row.user_id, userName: row.user_name, role: row.role, keyId: row.key_id, permissions };
}

/** Acts as an admin (sees every chat, decides anywhere): the key holds platform.admin, not just the role. */
export const isAdmin = (principal: Principal): boolean => principal.permissions.has("platform.admin");

/** A key of a removed person never authenticates (their keys were revoked on removal; this holds even if not). */
const KEY_SELECT = `select k.id as key_id, u.id as user_id, u.name as user_name, u.role, k.permissions
  from api_keys k join users u on u.id = k.user_id and u.removed_at is null`;

export async function principalFromToken(db: Db, token: string): Promise<Principal | null> {
  const rows = await db.query<KeyRow>(`${KEY_SELECT} where k.token_hash = $1 and k.revoked_at is null`, [
    sha256(token),
  ]);
  return rows[0] ? toPrincipal(rows[0]) : null;
}

/** The principal of a stored API key id (a run resumed later acts as the key that started it). */
export async function principalFromKeyId(db: Db, keyId: string): Promise<Principal | null> {
  const rows = await db.query<KeyRow>(`${KEY_SELECT} where k.id = $1 and k.revoked_at is null`, [keyId]);
  return rows[0] ? toPrincipal(rows[0]) : null;
}

export async function principalFromSession(db: Db, sessionId: string): Promise<Principal | null> {
  const rows = await db.query<KeyRow>(
    `${KEY_SELECT} join web_sessions s on s.api_key_id = k.id
     where s.id_hash = $1 and s.expires_at > $2 and k.revoked_at is null`,
    [sha256(sessionId), Date.now()],
  );
  return rows[0] ? toPrincipal(rows[0]) : null;
}

/** Resolves an `Authorization: Bearer …` header or the session cookie. */
export async function authenticate(
  db: Db,
  headers: { authorization?: string | null; cookie?: string | null },
): Promise<Principal | null> {
  const bearer = headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (bearer) return principalFromToken(db, bearer);
  const session = readCookie(headers.cookie ?? "", SESSION_COOKIE);
  return session ? principalFromSession(db, session) : null;
}

export function readCookie(header: string, name: string): string | undefined {
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

/**
 * Exchanges an API token for a session id (the value of the httpOnly cookie). Failed attempts count
 * against the client's address (see sign-in-limit.ts); past the limit it answers TOO_MANY_REQUESTS.
 */
export async function signIn(
  db: Db,
  token: string,
  clientAddress = "unknown",
): Promise<{ sessionId: string; principal: Principal; maxAgeSeconds: number }> {
  const limiter = signInLimiter();
  const verdict = limiter.check(clientAddress);
  if (!verdict.ok) {
    const who = verdict.scope === "address" ? "from your address" : "on this server";
    throw new AppError(
      "TOO_MANY_REQUESTS",
      `Too many failed sign-ins ${who}; try again in ${verdict.retryAfterSeconds} s.`,
      { retryAfterSeconds: verdict.retryAfterSeconds },
    );
  }
  const principal = await principalFromToken(db, token.trim());
  if (!principal) {
    limiter.failed(clientAddress);
    throw new AppError("UNAUTHORIZED", "That token is not valid.");
  }
  limiter.succeeded(clientAddress);
  const sessionId = randomToken("obs");
  const now = Date.now();
  await db.query("insert into web_sessions (id_hash, api_key_id, created_at, expires_at) values ($1, $2, $3, $4)", [
    sha256(sessionId),
    principal.keyId,
    now,
    now + SESSION_TTL_MS,
  ]);
  return { sessionId, principal, maxAgeSeconds: SESSION_TTL_MS / 1000 };
}

export async function signOut(db: Db, sessionId: string): Promise<void> {
  await db.query("delete from web_sessions where id_hash = $1", [sha256(sessionId)]);
}

export function requireAuth(principal: Principal | null): Principal {
  if (!principal) throw new AppError("UNAUTHORIZED", "Sign in or send an API key as a Bearer token.");
  return principal;
}

export function requirePermission(principal: Principal | null, permission: Permission): Principal {
  const p = requireAuth(principal);
  if (!p.permissions.has(permission)) throw new AppError("FORBIDDEN", `This needs the permission ${permission}.`);
  return p;
}

export async function createUser(db: Db, name: string, role: "admin" | "member"): Promise<string> {
  const id = `usr_${randomUUID()}`;
  await db.query("insert into users (id, name, role, created_at) values ($1, $2, $3, $4)", [
    id,
    name,
    role,
    Date.now(),
  ]);
  return id;
}

/**
 * The role of the person `userId` names, who must exist and not be removed (a new key or share for them is
 * refused otherwise): BAD_REQUEST naming the field `userId`.
 */
export async function personWhoBelongs(db: Db, userId: string): Promise<{ role: Role }> {
  const [user] = await db.query<{ role: Role; removed_at: string | number | null }>(
    "select role, removed_at from users where id = $1",
    [userId],
  );
  if (!user) throw new AppError("BAD_REQUEST", "userId: no such user");
  if (user.removed_at !== null) throw new AppError("BAD_REQUEST", "userId: this person was removed");
  return { role: user.role };
}

export async function createApiKey(
  db: Db,
  userId: string,
  name: string,
  permissions: readonly Permission[],
  token = randomToken("obk"),
): Promise<{ id: string; token: string }> {
  const unknown = permissions.filter((p) => !PERMISSIONS.includes(p));
  if (unknown.length) throw new AppError("BAD_REQUEST", `permissions: unknown ${unknown.join(", ")}`);
  const id = `key_${randomUUID()}`;
  await db.query(
    "insert into api_keys (id, user_id, name, token_hash, permissions, created_at) values ($1, $2, $3, $4, $5, $6)",
    [id, userId, name, sha256(token), JSON.stringify(permissions), Date.now()],
  );
  return { id, token };
}

/**
 * Makes sure an admin can sign in. With `fixedToken` (OPENBOT_ADMIN_TOKEN) that token is an admin key,
 * created once. Without it, the first start creates a token, writes it to `<dataDir>/admin-token`
 * (mode 0600) and returns it so the caller prints it once; only its hash is stored.
 */
export async function bootstrapAdmin(db: Db, dataDir: string, fixedToken?: string): Promise<{ createdToken?: string }> {
  // Instances starting at once on a fresh database take turns (a transaction-scoped advisory lock), so
  // only one makes the first admin and its key, and none fails on the other's insert.
  const token = await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [BOOTSTRAP_LOCK]);
    if (fixedToken) {
      if (await principalFromToken(tx, fixedToken)) return undefined;
      await createApiKey(tx, await adminUserId(tx), "OPENBOT_ADMIN_TOKEN", ALL_PERMISSIONS, fixedToken);
      return undefined;
    }
    const existing = await tx.query(
      `select 1 from api_keys k join users u on u.id = k.user_id
       where u.role = 'admin' and u.removed_at is null and k.revoked_at is null limit 1`,
    );
    if (existing.length) return undefined;
    return (await createApiKey(tx, await adminUserId(tx), "First admin token", ALL_PERMISSIONS)).token;
  });
  if (!token) return {};
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, "admin-token");
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  if (existsSync(file)) chmodSync(file, 0o600);
  return { createdToken: token };
}

/** Advisory lock key of the first-start bootstrap (any constant shared by every instance). */
const BOOTSTRAP_LOCK = 7_061_626_001;

async function adminUserId(db: Db): Promise<string> {
  const rows = await db.query<{ id: string }>(
    "select id from users where role = 'admin' and removed_at is null order by created_at limit 1",
  );
  return rows[0]?.id ?? createUser(db, "Admin", "admin");
}
