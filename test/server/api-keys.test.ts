/**
 * Listing and revoking API keys (tRPC `apiKeys.list` / `apiKeys.revoke`, the services behind
 * `GET /v1/api-keys` and `DELETE /v1/api-keys/:id`): the list never carries a token or its hash; a revoked
 * key and every web session signed in with it stop at once; the key OPENBOT_ADMIN_TOKEN names and the last
 * admin key holding platform.admin are refused; only platform.admin may do either.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS, type Permission } from "@/contracts/permissions";
import { sha256 } from "@/server/crypto";
import { openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import {
  authenticate,
  bootstrapAdmin,
  principalFromKeyId,
  principalFromSession,
  principalFromToken,
  SESSION_COOKIE,
  signIn,
} from "@/server/services/auth";
import { ADMIN_TOKEN, makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (e: TRPCError) => (e instanceof TRPCError ? e.code : `thrown: ${String(e)}`),
  );

describe("with OPENBOT_ADMIN_TOKEN set", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.close());

  const made: Partial<Record<"admin" | "member", number>> = {};
  async function newKey(role: "admin" | "member", permissions: Permission[]) {
    const admin = t.caller(t.admin);
    // Names of people who belong are unique: the first is "<role> with a key", later ones numbered.
    const n = (made[role] ?? 0) + 1;
    made[role] = n;
    const { id: userId } = await admin.users.create({ name: `${role} with a key${n > 1 ? ` ${n}` : ""}`, role });
    const key = await admin.apiKeys.create({ userId, name: `${role} laptop`, permissions });
    return { userId, ...key };
  }

  it("lists every key with its person and permissions, never a token or its hash", async () => {
    const { id, token, userId } = await newKey("member", ["sessions.read"]);
    const keys = await t.caller(t.admin).apiKeys.list();
    const listed = keys.find((k) => k.id === id);
    expect(listed).toEqual({
      id,
      name: "member laptop",
      userId,
      userName: "member with a key",
      role: "member",
      permissions: ["sessions.read"],
      createdAt: expect.any(Number),
      revokedAt: null,
      fromEnv: false,
    });
    expect(keys.find((k) => k.id === t.admin.keyId)).toMatchObject({
      name: "OPENBOT_ADMIN_TOKEN",
      role: "admin",
      permissions: [...PERMISSIONS],
      revokedAt: null,
      fromEnv: true,
    });
    const text = JSON.stringify(keys);
    for (const secret of [token, sha256(token), ADMIN_TOKEN, sha256(ADMIN_TOKEN)]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/token_?hash|"token"/i);
  });

  it("a revoked key stops at once, with the web sessions signed in with it; revoking again answers the same", async () => {
    const { id, token } = await newKey("member", ["sessions.read"]);
    const { db } = t.platform;
    const { sessionId } = await signIn(db, token);
    const cookie = `${SESSION_COOKIE}=${encodeURIComponent(sessionId)}`;
    expect((await authenticate(db, { cookie }))?.keyId).toBe(id);
    expect((await principalFromToken(db, token))?.keyId).toBe(id);

    const revoked = await t.caller(t.admin).apiKeys.revoke({ id });
    expect(revoked).toMatchObject({ id, revokedAt: expect.any(Number) });
    expect(await principalFromToken(db, token)).toBeNull();
    expect(await authenticate(db, { authorization: `Bearer ${token}` })).toBeNull();
    expect(await authenticate(db, { cookie })).toBeNull();
    expect(await principalFromSession(db, sessionId)).toBeNull();
    await expect(signIn(db, token)).rejects.toThrow("not valid");

    expect(await t.caller(t.admin).apiKeys.revoke({ id })).toEqual(revoked);
    expect((await t.caller(t.admin).apiKeys.list()).find((k) => k.id === id)).toEqual(revoked);
  });

  it("an unknown id is NOT_FOUND; an empty one a BAD_REQUEST naming the field", async () => {
    const missing = await t
      .caller(t.admin)
      .apiKeys.revoke({ id: "key_nope" })
      .catch((e: TRPCError) => e);
    expect(missing).toMatchObject({ code: "NOT_FOUND", message: "No such API key." });
    const empty = await t
      .caller(t.admin)
      .apiKeys.revoke({ id: "" })
      .catch((e: TRPCError) => e);
    expect(empty).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("id") });
  });

  it("refuses the key OPENBOT_ADMIN_TOKEN names: the next start would insert it again", async () => {
    const refused = await t
      .caller(t.admin)
      .apiKeys.revoke({ id: t.admin.keyId })
      .catch((e: TRPCError) => e);
    expect(refused).toMatchObject({ code: "CONFLICT" });
    expect((refused as TRPCError).message).toContain("Change or unset OPENBOT_ADMIN_TOKEN");
    expect(await principalFromToken(t.platform.db, ADMIN_TOKEN)).not.toBeNull();
  });

  it("a member, and an admin's key without platform.admin, may neither list nor revoke", async () => {
    const { id, token } = await newKey("member", ["sessions.read"]);
    const member = await makePerson(t, "member", ["apps.use", "sessions.read", "sessions.write"]);
    const scoped = await makePerson(
      t,
      "admin",
      PERMISSIONS.filter((p) => p !== "platform.admin"),
    );
    for (const principal of [member, scoped]) {
      expect(await codeOf(t.caller(principal).apiKeys.list())).toBe("FORBIDDEN");
      expect(await codeOf(t.caller(principal).apiKeys.revoke({ id }))).toBe("FORBIDDEN");
      expect(await codeOf(t.caller(principal).apiKeys.revoke({ id: principal.keyId }))).toBe("FORBIDDEN");
    }
    expect(await codeOf(t.caller(null).apiKeys.list())).toBe("UNAUTHORIZED");
    expect(await principalFromToken(t.platform.db, token)).not.toBeNull();
  });

  it("an admin may revoke their own key (and is signed out by it)", async () => {
    const { token } = await newKey("admin", ["platform.admin", "sessions.read"]);
    const self = (await principalFromToken(t.platform.db, token))!;
    expect(await codeOf(t.caller(self).apiKeys.revoke({ id: self.keyId }))).toBe("ok");
    expect(await principalFromToken(t.platform.db, token)).toBeNull();
  });
});

describe("without OPENBOT_ADMIN_TOKEN: the first admin token", () => {
  let t: TestPlatform;
  let first: string;
  beforeAll(async () => {
    t = await startTestPlatform({ env: { OPENBOT_ADMIN_TOKEN: "" } });
    first = readFileSync(path.join(t.dataDir, "admin-token"), "utf8").trim();
  });
  afterAll(() => t?.close());

  it("refuses to revoke the last admin key holding platform.admin, until another exists", async () => {
    const admin = (await principalFromToken(t.platform.db, first))!;
    const caller = t.caller(admin);
    const lastRefused = () => caller.apiKeys.revoke({ id: admin.keyId }).catch((e: TRPCError) => e);
    expect(await lastRefused()).toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("lock every admin out"),
    });

    // An admin's key without platform.admin, and a member's key, do not count.
    const { id: adminUser } = await caller.users.create({ name: "Second admin", role: "admin" });
    await caller.apiKeys.create({ userId: adminUser, name: "reader", permissions: ["sessions.read"] });
    const { id: memberUser } = await caller.users.create({ name: "Member", role: "member" });
    await caller.apiKeys.create({ userId: memberUser, name: "member", permissions: ["apps.use"] });
    expect(await lastRefused()).toMatchObject({ code: "CONFLICT" });
    expect(await principalFromToken(t.platform.db, first)).not.toBeNull();

    // With a second platform.admin key the first may go; then the second is the last one.
    const second = await caller.apiKeys.create({ userId: adminUser, name: "admin", permissions: ["platform.admin"] });
    expect((await caller.apiKeys.revoke({ id: admin.keyId })).revokedAt).toEqual(expect.any(Number));
    const successor = (await principalFromToken(t.platform.db, second.token))!;
    const refused = await t
      .caller(successor)
      .apiKeys.revoke({ id: second.id })
      .catch((e: TRPCError) => e);
    expect(refused).toMatchObject({ code: "CONFLICT", message: expect.stringContaining("lock every admin out") });
    expect(await principalFromToken(t.platform.db, second.token)).not.toBeNull();
  });

  it("two revocations at once cannot take the last two admin keys", async () => {
    const caller = t.caller(await anyAdmin(t));
    const { id: userId } = await caller.users.create({ name: "Racer", role: "admin" });
    const a = await caller.apiKeys.create({ userId, name: "a", permissions: ["platform.admin"] });
    const active = (await caller.apiKeys.list()).filter(
      (k) => k.revokedAt === null && k.role === "admin" && k.permissions.includes("platform.admin"),
    );
    expect(active.map((k) => k.id)).toContain(a.id);
    expect(active).toHaveLength(2);
    const outcomes = await Promise.allSettled(active.map((k) => caller.apiKeys.revoke({ id: k.id })));
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
  });
});

/** A working admin key holding platform.admin (whichever the previous test left). */
async function anyAdmin(t: TestPlatform) {
  const rows = await t.platform.db.query<{ id: string }>(
    `select k.id from api_keys k join users u on u.id = k.user_id
     where u.role = 'admin' and k.revoked_at is null and k.permissions like '%platform.admin%' limit 1`,
  );
  return (await principalFromKeyId(t.platform.db, rows[0]!.id))!;
}

describe("why the OPENBOT_ADMIN_TOKEN key is not revocable", () => {
  it("bootstrap finds a revoked env key invalid, inserts it again and fails on its hash", async () => {
    const db = await openDb({});
    try {
      await migrate(db);
      const token = "fixed-admin-token-revoked-later";
      const dataDir = path.join(tmpdir(), "openbot-never-written");
      await bootstrapAdmin(db, dataDir, token);
      await db.query("update api_keys set revoked_at = $1", [Date.now()]);
      await expect(bootstrapAdmin(db, dataDir, token)).rejects.toThrow(/duplicate key|unique/);
    } finally {
      await db.close();
    }
  });
});
