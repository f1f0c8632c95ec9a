/**
 * Changing a person's role and removing a person (tRPC `users.update` / `users.remove`, the services behind
 * `PATCH` / `DELETE /v1/users/:id`): a demoted admin's keys lose platform.admin on the next request; a
 * removed person's keys, sessions and shares end at once, their running turns stop and their live runs are
 * cancelled, while their row and records stay; nobody may remove or demote themselves, the holder of
 * OPENBOT_ADMIN_TOKEN, or the last admin who can administer; only platform.admin may do either.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "@/contracts/permissions";
import { type Principal, principalFromSession, principalFromToken, signIn } from "@/server/services/auth";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ code: "ok", message: "", reason: undefined as unknown }),
    (e: TRPCError) => ({
      code: e.code,
      message: e.message,
      reason: (e.cause as { details?: { reason?: unknown } } | undefined)?.details?.reason,
    }),
  );

describe("people: roles and removal", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({ codeMode: true });
  });
  afterAll(() => t?.close());

  async function personWithKey(name: string, role: "admin" | "member", permissions = [...PERMISSIONS]) {
    const admin = t.caller(t.admin);
    const { id } = await admin.users.create({ name, role });
    const allowed = role === "admin" ? permissions : permissions.filter((p) => p !== "platform.admin");
    const { token } = await admin.apiKeys.create({ userId: id, name: `${name}'s key`, permissions: allowed });
    return { id, token };
  }

  it("lists everyone with removedAt; a member or a key without platform.admin may neither change nor remove", async () => {
    const { id } = await personWithKey("Listed", "member");
    const listed = (await t.caller(t.admin).users.list()).find((u) => u.id === id);
    expect(listed).toEqual({
      id,
      name: "Listed",
      role: "member",
      createdAt: expect.any(Number),
      removedAt: null,
      holdsAdminToken: false,
    });

    const member = await makePerson(t, "member");
    const reader = await makePerson(t, "admin", ["sessions.read"]);
    for (const who of [member, reader, null]) {
      expect((await refusal(t.caller(who).users.remove({ id }))).code).toBe(who ? "FORBIDDEN" : "UNAUTHORIZED");
      expect((await refusal(t.caller(who).users.update({ id, role: "admin" }))).code).toBe(
        who ? "FORBIDDEN" : "UNAUTHORIZED",
      );
    }
    const after = (await t.caller(t.admin).users.list()).find((u) => u.id === id);
    expect(after).toMatchObject({ role: "member", removedAt: null });
  });

  it("demoting an admin cuts their keys and sessions to a member's permissions at once; promoting gives old keys nothing", async () => {
    const { id, token } = await personWithKey("Demoted", "admin");
    const { sessionId } = await signIn(t.platform.db, token);
    expect((await principalFromSession(t.platform.db, sessionId))?.permissions.has("platform.admin")).toBe(true);

    const view = await t.caller(t.admin).users.update({ id, role: "member" });
    expect(view).toMatchObject({ id, role: "member", removedAt: null });
    const cut = (await principalFromToken(t.platform.db, token))!;
    expect([...cut.permissions].sort()).toEqual(["apps.use", "sessions.read", "sessions.write"]);
    expect([...(await principalFromSession(t.platform.db, sessionId))!.permissions]).not.toContain("platform.admin");
    expect((await refusal(t.caller(cut).users.list())).code).toBe("FORBIDDEN");

    // Promoted again: the key was created with platform.admin, so it administers again; a member's key would not.
    await t.caller(t.admin).users.update({ id, role: "admin" });
    expect((await principalFromToken(t.platform.db, token))?.permissions.has("platform.admin")).toBe(true);
    const member = await personWithKey("Promoted", "member");
    await t.caller(t.admin).users.update({ id: member.id, role: "admin" });
    expect((await principalFromToken(t.platform.db, member.token))?.permissions.has("platform.admin")).toBe(false);
  });

  it("removing a person revokes their keys, ends their sessions and shares, cancels their live runs, and keeps their records", async () => {
    const { id, token } = await personWithKey("Leaving", "member");
    const leaving = (await principalFromToken(t.platform.db, token))!;
    const { sessionId } = await signIn(t.platform.db, token);
    const caller = t.caller(leaving);
    const chat = await caller.chats.create({ title: "Leaving's chat" });
    const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: "return 1" });
    if (!ticket) throw new Error("the run was not handed to the page");
    const shared = await t.caller(t.admin).chats.create({ title: "Shared with Leaving" });
    await t.caller(t.admin).chats.share({ chatId: shared.id, userId: id });
    const turnStops: string[] = [];
    const onStop = ({ turnId }: { turnId: string }) => turnStops.push(turnId);
    t.platform.events.on("turn-stop", onStop);
    await t.platform.db.query(
      `insert into turns (id, chat_id, status, host, created_by, api_key_id, created_at, updated_at)
       values ('turn_leaving', $1, 'Running', 'test', $2, $3, 1, 1)`,
      [chat.id, id, leaving.keyId],
    );

    const removed = await t.caller(t.admin).users.remove({ id });
    t.platform.events.off("turn-stop", onStop);
    expect(removed).toMatchObject({ id, name: "Leaving", removedAt: expect.any(Number) });
    expect(await principalFromToken(t.platform.db, token)).toBeNull();
    expect(await principalFromSession(t.platform.db, sessionId)).toBeNull();
    const keys = (await t.caller(t.admin).apiKeys.list()).filter((k) => k.userId === id);
    expect(keys.map((k) => k.revokedAt)).toEqual([expect.any(Number)]);
    expect(turnStops).toEqual(["turn_leaving"]);
    const run = await t.caller(t.admin).codeRuns.byId({ id: ticket.runId });
    expect(run.status).toBe("Cancelled");
    expect(run.result).toMatchObject({
      _tag: "Failed",
      reason: "Cancelled",
      message: expect.stringContaining("Leaving"),
    });
    expect(await t.platform.db.query("select 1 from chat_shares where user_id = $1", [id])).toEqual([]);
    // Their chat and its run stay, for the records; they are listed as removed.
    expect((await t.caller(t.admin).chats.list()).map((c) => c.id)).toContain(chat.id);
    expect((await t.caller(t.admin).users.list()).find((u) => u.id === id)?.removedAt).toBe(removed.removedAt);

    // Again: the same view. No new key, share, secret or role for them.
    expect(await t.caller(t.admin).users.remove({ id })).toEqual(removed);
    const key = await refusal(t.caller(t.admin).apiKeys.create({ userId: id, name: "again", permissions: [] }));
    expect(key).toMatchObject({ code: "BAD_REQUEST", message: "userId: this person was removed" });
    const share = await refusal(t.caller(t.admin).chats.share({ chatId: shared.id, userId: id }));
    expect(share).toMatchObject({ code: "BAD_REQUEST", message: "userId: this person was removed" });
    const secret = await refusal(
      t.caller(t.admin).vault.create({
        name: "leaving/token",
        secret: "s3cret-value-1",
        allow: [],
        usableBy: { users: [id], roles: [] },
      }),
    );
    expect(secret.code).toBe("BAD_REQUEST");
    const role = await refusal(t.caller(t.admin).users.update({ id, role: "admin" }));
    expect(role).toMatchObject({ code: "CONFLICT", reason: "removed" });
  });

  it("two people who belong cannot share a name (case and spaces aside); a removed person's name is free again", async () => {
    const admin = t.caller(t.admin);
    const { id } = await admin.users.create({ name: "Grace Hopper", role: "member" });
    for (const name of ["Grace Hopper", "  grace HOPPER "]) {
      const r = await refusal(admin.users.create({ name, role: "admin" }));
      expect(r).toMatchObject({ code: "CONFLICT", reason: "name_taken" });
      expect(r.message).toBe(
        "name: a person named Grace Hopper (member) already exists: choose a name that tells them apart",
      );
    }
    // Two adds at once: one takes the name.
    const both = await Promise.all([1, 2].map(() => refusal(admin.users.create({ name: "Ada", role: "member" }))));
    expect(both.map((r) => r.code).sort()).toEqual(["CONFLICT", "ok"]);
    await admin.users.remove({ id });
    expect((await refusal(admin.users.create({ name: "Grace Hopper", role: "member" }))).code).toBe("ok");
    expect((await admin.users.list()).filter((u) => u.name === "Grace Hopper")).toHaveLength(2);
  });

  it("a key of a removed person does not authenticate even if it is un-revoked by hand", async () => {
    const { id, token } = await personWithKey("Restored by hand", "member");
    await t.caller(t.admin).users.remove({ id });
    await t.platform.db.query("update api_keys set revoked_at = null where user_id = $1", [id]);
    expect(await principalFromToken(t.platform.db, token)).toBeNull();
  });

  it("refuses removing or demoting yourself, the OPENBOT_ADMIN_TOKEN holder, and the last admin who can administer", async () => {
    // The OPENBOT_ADMIN_TOKEN key's holder, asked by another admin: the lists say so, so a page offers no action.
    const other = await personWithKey("Other admin", "admin");
    const people = await t.caller(t.admin).users.list();
    expect(people.filter((u) => u.holdsAdminToken).map((u) => u.id)).toEqual([t.admin.userId]);
    // A key merely named like it is not it: the token decides.
    await t
      .caller(t.admin)
      .apiKeys.create({ userId: other.id, name: "OPENBOT_ADMIN_TOKEN", permissions: ["apps.use"] });
    const keys = await t.caller(t.admin).apiKeys.list();
    expect(keys.filter((k) => k.fromEnv).map((k) => [k.userId, k.name])).toEqual([
      [t.admin.userId, "OPENBOT_ADMIN_TOKEN"],
    ]);
    const otherAdmin = (await principalFromToken(t.platform.db, other.token))!;
    for (const change of [
      t.caller(otherAdmin).users.remove({ id: t.admin.userId }),
      t.caller(otherAdmin).users.update({ id: t.admin.userId, role: "member" }),
    ]) {
      const r = await refusal(change);
      expect(r).toMatchObject({ code: "CONFLICT", reason: "admin_token_env" });
      expect(r.message).toContain("OPENBOT_ADMIN_TOKEN");
    }
    for (const change of [
      t.caller(otherAdmin).users.remove({ id: other.id }),
      t.caller(otherAdmin).users.update({ id: other.id, role: "member" }),
    ])
      expect(await refusal(change)).toMatchObject({ code: "CONFLICT", reason: "self" });
    expect((await refusal(t.caller(t.admin).users.remove({ id: "usr_nobody" }))).code).toBe("NOT_FOUND");
  });
});

describe("without OPENBOT_ADMIN_TOKEN: the last admin who can administer", () => {
  let t: TestPlatform;
  let first: Principal;
  beforeAll(async () => {
    t = await startTestPlatform({ env: { OPENBOT_ADMIN_TOKEN: "" } });
    first = (await principalFromToken(
      t.platform.db,
      readFileSync(path.join(t.dataDir, "admin-token"), "utf8").trim(),
    ))!;
  });
  afterAll(() => t?.close());

  async function newAdmin(name: string) {
    const { id } = await t.caller(first).users.create({ name, role: "admin" });
    const { token } = await t.caller(first).apiKeys.create({ userId: id, name: "all", permissions: [...PERMISSIONS] });
    return (await principalFromToken(t.platform.db, token))!;
  }

  const administering = async () =>
    (
      await t.platform.db.query<{ n: number }>(
        `select count(*)::int as n from api_keys k join users u on u.id = k.user_id
       where u.role = 'admin' and u.removed_at is null and k.revoked_at is null and k.permissions like '%platform.admin%'`,
      )
    )[0]!.n;

  it("a token generated at first start is an ordinary key: neither it nor its holder is marked as set by the variable", async () => {
    expect((await t.caller(first).apiKeys.list()).filter((k) => k.fromEnv)).toEqual([]);
    expect((await t.caller(first).users.list()).filter((u) => u.holdsAdminToken)).toEqual([]);
  });

  it("two admins removing each other at once: one goes, the other is refused and stays", async () => {
    const second = await newAdmin("Second");
    const outcomes = await Promise.all([
      refusal(t.caller(first).users.remove({ id: second.userId })),
      refusal(t.caller(second).users.remove({ id: first.userId })),
    ]);
    expect(outcomes.map((o) => o.code).sort()).toEqual(["CONFLICT", "ok"]);
    const refused = outcomes.find((o) => o.code === "CONFLICT")!;
    expect(refused.reason).toBe("last_admin_key");
    expect(refused.message).toContain("lock every admin out");
    expect(await administering()).toBe(1);
    if (outcomes[1]!.code === "ok") first = second; // the survivor administers on
  });

  it("two admins demoting each other at once: one becomes a member, the other is refused", async () => {
    const third = await newAdmin("Third");
    const outcomes = await Promise.all([
      refusal(t.caller(first).users.update({ id: third.userId, role: "member" })),
      refusal(t.caller(third).users.update({ id: first.userId, role: "member" })),
    ]);
    expect(outcomes.map((o) => o.code).sort()).toEqual(["CONFLICT", "ok"]);
    expect(outcomes.find((o) => o.code === "CONFLICT")?.reason).toBe("last_admin_key");
    expect(await administering()).toBe(1);
  });
});
