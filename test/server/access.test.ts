/**
 * Who may call what: every tRPC procedure, enumerated from the router (a new one without an access rule
 * fails here), is called with no principal, a key without permissions, a member's key, and an admin's
 * key holding everything except the permission the procedure needs; each must be refused before it
 * runs. A key holds exactly the permissions it was created with, cut to its user's role.
 */

import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS, type Permission } from "@/contracts/permissions";
import { TRPC_ACCESS } from "@/server/api/access";
import { appRouter } from "@/server/api/root";
import { type Principal, principalFromToken } from "@/server/services/auth";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const procedures = Object.keys(
  (appRouter._def as unknown as { procedures: Record<string, unknown> }).procedures,
).sort();

/** Calls `path` through createCaller with a throwaway input; resolves to the error code or "ok". */
async function codeOf(principal: Principal | null, path: string): Promise<string> {
  let target: unknown = t.caller(principal);
  for (const part of path.split(".")) target = (target as Record<string, unknown>)[part];
  try {
    const result = await (target as (input: unknown) => Promise<unknown>)({});
    if (result && typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
      await (result as AsyncIterator<unknown> & AsyncIterable<unknown>)[Symbol.asyncIterator]().return?.();
    }
    return "ok";
  } catch (error) {
    return error instanceof TRPCError ? error.code : `thrown: ${String(error)}`;
  }
}

async function adminKey(permissions: Permission[]): Promise<Principal> {
  return makePerson(t, "admin", permissions);
}

describe("access to every tRPC procedure", () => {
  it("the access table names exactly the router's procedures", () => {
    expect(procedures.length).toBeGreaterThan(40);
    expect(procedures).toEqual(Object.keys(TRPC_ACCESS).sort());
  });

  it("no principal: every non-public procedure answers UNAUTHORIZED", async () => {
    for (const path of procedures) {
      if (TRPC_ACCESS[path] === "public") continue;
      expect(`${path}: ${await codeOf(null, path)}`).toBe(`${path}: UNAUTHORIZED`);
    }
  });

  it("a key with no permissions (even an admin's) is refused everywhere a permission is needed", async () => {
    const none = await adminKey([]);
    expect(none.permissions.size).toBe(0);
    for (const path of procedures) {
      if (TRPC_ACCESS[path] === "public") continue;
      expect(`${path}: ${await codeOf(none, path)}`).toBe(`${path}: FORBIDDEN`);
    }
  });

  it("an admin's key without the needed permission is refused; a member's key never reaches admin procedures", async () => {
    const member = await makePerson(t, "member", ["apps.use", "sessions.read", "sessions.write"]);
    const without = new Map<Permission, Principal>();
    for (const p of PERMISSIONS) without.set(p, await adminKey(PERMISSIONS.filter((x) => x !== p)));
    for (const path of procedures) {
      const rule = TRPC_ACCESS[path]!;
      if (rule === "public") continue;
      for (const needed of rule)
        expect(`${path} without ${needed}: ${await codeOf(without.get(needed)!, path)}`).toBe(
          `${path} without ${needed}: FORBIDDEN`,
        );
      if (rule.includes("platform.admin"))
        expect(`${path} as member: ${await codeOf(member, path)}`).toBe(`${path} as member: FORBIDDEN`);
    }
  });

  it("public procedures answer a stranger", async () => {
    expect(await t.caller(null).auth.me()).toBeNull();
  });
});

describe("API-key scopes", () => {
  it("an admin's sessions.read key holds only sessions.read: no vault, users, settings or decisions", async () => {
    const reader = await adminKey(["sessions.read"]);
    expect(await t.caller(reader).auth.me()).toMatchObject({ role: "admin", permissions: ["sessions.read"] });
    for (const call of [
      () => t.caller(reader).vault.list(),
      () => t.caller(reader).users.list(),
      () => t.caller(reader).settings.get(),
      () => t.caller(reader).decisions.list({}),
    ]) {
      expect(
        await call().then(
          () => "ok",
          (e: TRPCError) => e.code,
        ),
      ).toBe("FORBIDDEN");
    }
    expect(await t.caller(reader).chats.list()).toBeInstanceOf(Array);
  });

  it("an admin's key without platform.admin sees only its own chats", async () => {
    const adminChat = await t.caller(t.admin).chats.create({ title: "the admin's own" });
    const scoped = await adminKey(["sessions.read", "sessions.write", "apps.use"]);
    const ids = (await t.caller(scoped).chats.list()).map((c) => c.id);
    expect(ids).not.toContain(adminChat.id);
    expect(
      await t
        .caller(scoped)
        .chats.byId({ id: adminChat.id })
        .then(
          () => "ok",
          (e: TRPCError) => e.code,
        ),
    ).toBe("NOT_FOUND");
    expect((await t.caller(t.admin).chats.list()).map((c) => c.id)).toContain(adminChat.id);
  });

  it("a member's key can never hold platform.admin: refused at creation, dropped if the user is demoted", async () => {
    const caller = t.caller(t.admin);
    const { id: memberId } = await caller.users.create({ name: "Member", role: "member" });
    const refused = await caller.apiKeys
      .create({ userId: memberId, name: "too much", permissions: ["platform.admin"] })
      .catch((e: TRPCError) => e);
    expect((refused as TRPCError).code).toBe("BAD_REQUEST");
    expect((refused as TRPCError).message).toContain("a member cannot hold platform.admin");

    const { id: userId } = await caller.users.create({ name: "Soon demoted", role: "admin" });
    const { token } = await caller.apiKeys.create({ userId, name: "all", permissions: [...PERMISSIONS] });
    await t.platform.db.query("update users set role = 'member' where id = $1", [userId]);
    const demoted = (await principalFromToken(t.platform.db, token))!;
    expect([...demoted.permissions].sort()).toEqual(["apps.use", "sessions.read", "sessions.write"]);
    expect(
      await t
        .caller(demoted)
        .vault.list()
        .then(
          () => "ok",
          (e: TRPCError) => e.code,
        ),
    ).toBe("FORBIDDEN");
  });
});
