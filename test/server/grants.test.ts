/**
 * Remembered grants and taint escalation (issue 13, items 2 and 3) through the services, against the
 * built-in Notes, Email and Work calendar apps: "allow for this run" turns a loop of sends into one
 * decision; a chat's grant allows later runs of that chat only; `match: "arguments"` allows exactly those
 * arguments; a vault reference is never allowed by a grant wider than the run; grants are listed,
 * counted and revoked (by their creator or an admin; a stranger finds none); once a run read untrusted
 * content, a write asks even with policy allow, saying why and where its arguments came from.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTurnToEnd } from "@/server/services/agent/turns";
import { lastIsTool, scriptedModel } from "../helpers/mock-model";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  await t.caller(t.admin).vault.create({
    name: "notes/secret",
    secret: "s3cret-value-for-notes",
    allow: [{ connection: "notes", tool: "write-note" }],
  });
}, 60_000);
afterAll(() => t?.close());

const sendLoop = (n: number, tag: string) => `const ids = []
for (let i = 0; i < ${n}; i++) {
  const sent = await apps.email.send_email({ to: "team@example.com", subject: "${tag} " + i, body: "b" })
  ids.push(sent.structuredContent.id)
}
return ids.length`;

const writeNote = (title: string, body = JSON.stringify("plain")) =>
  `return (await apps.notes.write_note({ title: ${JSON.stringify(title)}, body: ${body} })).structuredContent.id`;

async function sentWith(prefix: string) {
  const rows = await t.platform.db.query<{ n: number }>("select count(*)::int as n from emails where subject like $1", [
    `${prefix}%`,
  ]);
  return rows[0]!.n;
}

async function pending(chatId: string) {
  return t.caller(t.admin).decisions.list({ status: "pending", chatId });
}

async function settle(runId: string) {
  await t.platform.settled();
  return t.caller(t.admin).codeRuns.byId({ id: runId });
}

describe("remembered grants", () => {
  it('a sequential loop of 20 sends with "allow for this run" needs one decision, and each call says which grant', async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const run = await caller.codeRuns.runOnServer({ chatId: chat.id, code: sendLoop(20, "loop20"), reason: "r" });
    expect(run.status).toBe("Waiting");
    const [d] = await pending(chat.id);
    await caller.decisions.decide({ id: d!.id, decision: "allow", remember: { scope: "run", match: "binding" } });
    const done = await settle(run.id);
    expect(done.status).toBe("Completed");
    expect((done.result as { value: number }).value).toBe(20);
    expect(await sentWith("loop20 ")).toBe(20);
    const decisions = await caller.decisions.list({ chatId: chat.id });
    expect(decisions).toHaveLength(1);
    const [grant] = await caller.grants.list({ runId: run.id });
    expect(grant).toMatchObject({ scope: "run", match: "binding", binding: "email.send_email", uses: 19 });
    expect(done.calls[0]!.grantId).toBeNull();
    expect(done.calls.slice(1).every((c) => c.grantId === grant!.id)).toBe(true);
    // Another run in the same chat is not covered by a run's grant.
    const next = await caller.codeRuns.runOnServer({ chatId: chat.id, code: sendLoop(1, "loop20b"), reason: "r" });
    expect(next.status).toBe("Waiting");
  });

  it("a chat's grant allows later runs in that chat without asking, not in another chat; revoke ends it", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const first = await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("chat grant 1"), reason: "r" });
    const [d] = await pending(chat.id);
    await caller.decisions.decide({ id: d!.id, decision: "allow", remember: { scope: "chat", match: "binding" } });
    expect((await settle(first.id)).status).toBe("Completed");
    const second = await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("chat grant 2"), reason: "r" });
    expect(second.status).toBe("Completed");
    const [grant] = await caller.grants.list({ chatId: chat.id });
    expect(second.calls[0]!.grantId).toBe(grant!.id);
    expect(grant).toMatchObject({ scope: "chat", uses: 1, active: true, createdBy: { id: t.admin.userId } });

    const other = await caller.chats.create({});
    expect((await caller.codeRuns.runOnServer({ chatId: other.id, code: writeNote("x"), reason: "r" })).status).toBe(
      "Waiting",
    );

    const revoked = await caller.grants.revoke({ id: grant!.id });
    expect(revoked).toMatchObject({ active: false, revokedBy: { id: t.admin.userId } });
    expect(revoked.revokedAt).not.toBeNull();
    const third = await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("chat grant 3"), reason: "r" });
    expect(third.status).toBe("Waiting");
    expect(await caller.grants.list({ chatId: chat.id })).toHaveLength(0);
    expect((await caller.grants.list({ chatId: chat.id, all: true }))[0]).toMatchObject({ id: grant!.id, uses: 1 });
  });

  it('match "arguments" allows exactly the arguments decided, and a ttl ends a grant', async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const first = await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("same"), reason: "r" });
    const [d] = await pending(chat.id);
    await caller.decisions.decide({
      id: d!.id,
      decision: "allow",
      remember: { scope: "chat", match: "arguments", ttlMinutes: 5 },
    });
    await settle(first.id);
    const [grant] = await caller.grants.list({ chatId: chat.id });
    expect(grant!.arguments).toEqual({ title: "same", body: "plain" });
    expect(grant!.expiresAt).toBeGreaterThan(Date.now());
    expect((await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("same"), reason: "r" })).status).toBe(
      "Completed",
    );
    expect(
      (await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("different"), reason: "r" })).status,
    ).toBe("Waiting");
    await t.platform.db.query("update grants set expires_at = $1 where id = $2", [Date.now() - 1, grant!.id]);
    expect((await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("same"), reason: "r" })).status).toBe(
      "Waiting",
    );
  });

  it("a call carrying a vault reference is allowed by the run's grant, never by the chat's", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const twice = `await apps.notes.write_note({ title: "v1", body: vault.notes.secret })
await apps.notes.write_note({ title: "v2", body: vault.notes.secret })
return "ok"`;
    const run = await caller.codeRuns.runOnServer({ chatId: chat.id, code: twice, reason: "r" });
    const [d] = await pending(chat.id);
    await caller.decisions.decide({ id: d!.id, decision: "allow", remember: { scope: "chat", match: "binding" } });
    // The chat's grant does not cover the second vault call of the same run.
    const waiting = await settle(run.id);
    expect(waiting.status).toBe("Waiting");
    const [d2] = await pending(chat.id);
    expect(d2!.request.code.index).toBe(1);
    await caller.decisions.decide({ id: d2!.id, decision: "allow", remember: { scope: "run", match: "binding" } });
    expect((await settle(run.id)).status).toBe("Completed");
    // A later run in the chat: the same call with a reference asks again; without one the chat's grant allows it.
    const again = await caller.codeRuns.runOnServer({ chatId: chat.id, code: twice, reason: "r" });
    expect(again.status).toBe("Waiting");
    const d3 = (await pending(chat.id)).find((x) => x.runId === again.id)!;
    await caller.decisions.decide({ id: d3.id, decision: "allow", remember: { scope: "run", match: "binding" } });
    const allowedByRun = await settle(again.id);
    expect(allowedByRun.status).toBe("Completed");
    expect(allowedByRun.calls[1]!.grantId).not.toBeNull();
    const plain = await caller.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("no ref"), reason: "r" });
    expect(plain.status).toBe("Completed");
  });

  it("a chat's grant allows the model's own (direct) calls in that chat too, not in another chat, and never a vault reference", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const other = await caller.chats.create({});
    // The model makes one call per message it is sent (`input`, then null), and answers in text after it.
    let input: { title: string; body: string } | null = { title: "direct 1", body: "plain" };
    t.platform.modelOverride = scriptedModel((call) => {
      if (lastIsTool(call) || input === null) return { text: "done" };
      const step = { toolCall: { name: "notes__write_note", input } };
      input = null;
      return step;
    });
    const notes = async (title: string) =>
      (await t.platform.db.query<{ n: number }>("select count(*)::int as n from notes where title = $1", [title]))[0]!
        .n;
    try {
      await runTurnToEnd({ platform: t.platform, principal: t.admin }, { chatId: chat.id, message: "write" });
      const [d] = await pending(chat.id);
      expect(d!.runId).toBeNull();
      await caller.decisions.decide({ id: d!.id, decision: "allow", remember: { scope: "chat", match: "binding" } });
      await t.platform.settled();
      expect(await notes("direct 1")).toBe(1);
      const [grant] = await caller.grants.list({ chatId: chat.id });
      expect(grant).toMatchObject({ scope: "chat", binding: "notes.write_note", uses: 0 });

      // The model's next direct call of the tool in this chat goes without asking, and the grant counts it.
      input = { title: "direct 2", body: "plain" };
      await runTurnToEnd({ platform: t.platform, principal: t.admin }, { chatId: chat.id, message: "again" });
      expect(await pending(chat.id)).toEqual([]);
      expect(await notes("direct 2")).toBe(1);
      expect((await caller.grants.list({ chatId: chat.id }))[0]).toMatchObject({ id: grant!.id, uses: 1 });

      // Another chat still asks.
      input = { title: "direct elsewhere", body: "plain" };
      await runTurnToEnd({ platform: t.platform, principal: t.admin }, { chatId: other.id, message: "write" });
      expect(await pending(other.id)).toHaveLength(1);
      expect(await notes("direct elsewhere")).toBe(0);

      // A vault reference is never allowed by a grant wider than a run: the direct call asks.
      input = { title: "direct vault", body: "\u27E6vault:notes/secret\u27E7" };
      await runTurnToEnd({ platform: t.platform, principal: t.admin }, { chatId: chat.id, message: "secret" });
      expect(await pending(chat.id)).toHaveLength(1);
      expect(await notes("direct vault")).toBe(0);
    } finally {
      t.platform.modelOverride = undefined;
    }
  });

  it("members cannot remember for everyone (403); admins can; bad remember input is named; a deny is not remembered", async () => {
    const member = await makePerson(t, "member");
    const mc = t.caller(member);
    const chat = await mc.chats.create({});
    await mc.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("member"), reason: "r" });
    const [d] = await mc.decisions.list({ status: "pending", chatId: chat.id });
    const forbidden = await mc.decisions
      .decide({ id: d!.id, decision: "allow", remember: { scope: "everyone", match: "binding" } })
      .catch((e: TRPCError) => e);
    expect((forbidden as TRPCError).code).toBe("FORBIDDEN");
    expect((forbidden as TRPCError).message).toContain("everyone");
    const bad = await mc.decisions
      .decide({ id: d!.id, decision: "allow", remember: { scope: "chat", match: "all" as never } })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("remember.match");
    const deny = await mc.decisions
      .decide({ id: d!.id, decision: "deny", remember: { scope: "chat", match: "binding" } })
      .catch((e: TRPCError) => e);
    expect((deny as TRPCError).code).toBe("BAD_REQUEST");
    // None of these took the decision.
    expect((await mc.decisions.list({ status: "pending", chatId: chat.id }))[0]!.id).toBe(d!.id);

    const ac = t.caller(t.admin);
    const achat = await ac.chats.create({});
    const arun = await ac.codeRuns.runOnServer({ chatId: achat.id, code: writeNote("everyone"), reason: "r" });
    const [ad] = await pending(achat.id);
    await ac.decisions.decide({ id: ad!.id, decision: "allow", remember: { scope: "everyone", match: "arguments" } });
    await settle(arun.id);
    // It applies to the member's chat too, for exactly those arguments.
    const mrun = await mc.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("everyone"), reason: "r" });
    expect(mrun.status).toBe("Completed");
    const everyone = (await mc.grants.list({})).find((g) => g.scope === "everyone")!;
    // The member sees it (it applies to them) but may not revoke an admin's grant: there is no such grant for them.
    const notYours = await mc.grants.revoke({ id: everyone.id }).catch((e: TRPCError) => e);
    expect((notYours as TRPCError).code).toBe("NOT_FOUND");
    await ac.grants.revoke({ id: everyone.id });
  });

  it("only the creator or an admin revokes; strangers and callers without apps.use get nothing", async () => {
    const member = await makePerson(t, "member");
    const stranger = await makePerson(t, "member");
    const noApps = await makePerson(t, "member", ["sessions.read", "sessions.write"]);
    const mc = t.caller(member);
    const chat = await mc.chats.create({});
    const run = await mc.codeRuns.runOnServer({ chatId: chat.id, code: writeNote("mine"), reason: "r" });
    const [d] = await mc.decisions.list({ status: "pending", chatId: chat.id });
    await mc.decisions.decide({ id: d!.id, decision: "allow", remember: { scope: "chat", match: "binding" } });
    await t.platform.settled();
    expect(run.status).toBe("Waiting");
    const [grant] = await mc.grants.list({ chatId: chat.id });
    expect(grant!.createdBy.id).toBe(member.userId);
    expect(await t.caller(stranger).grants.list({ chatId: chat.id })).toEqual([]);
    const s = await t
      .caller(stranger)
      .grants.revoke({ id: grant!.id })
      .catch((e: TRPCError) => e);
    expect((s as TRPCError).code).toBe("NOT_FOUND");
    const n = await t
      .caller(noApps)
      .grants.list({})
      .catch((e: TRPCError) => e);
    expect((n as TRPCError).code).toBe("FORBIDDEN");
    const anon = await t
      .caller(null)
      .grants.list({})
      .catch((e: TRPCError) => e);
    expect((anon as TRPCError).code).toBe("UNAUTHORIZED");
    expect((await t.caller(t.admin).grants.list({ chatId: chat.id }))[0]!.id).toBe(grant!.id);
    expect((await mc.grants.revoke({ id: grant!.id })).active).toBe(false);
  });
});

describe("taint escalation", () => {
  const READ_THEN_WRITE = `const note = await apps.notes.read_note({ id: "note_seed_1" })
const id = (await apps.work_calendar.create_event({ title: note.structuredContent.body.slice(0, 60), start: "2026-10-23T09:00:00Z", end: "2026-10-23T10:00:00Z", attendees: 1 })).structuredContent.id
return id`;

  it("after reading from an untrusted connection a write asks even with policy allow, saying why and where its argument came from", async () => {
    const caller = t.caller(t.admin);
    await caller.connections.setPolicies({ id: "conn_work_calendar", policies: { "create-event": "allow" } });
    try {
      const chat = await caller.chats.create({});
      const trusted = await caller.codeRuns.runOnServer({ chatId: chat.id, code: READ_THEN_WRITE, reason: "r" });
      expect(trusted.status).toBe("Completed");

      const marked = await caller.connections.update({ id: "conn_notes", patch: { untrustedContent: true } });
      expect(marked).toMatchObject({ untrustedContent: true, untrustedContentSet: true });
      const run = await caller.codeRuns.runOnServer({ chatId: chat.id, code: READ_THEN_WRITE, reason: "r" });
      expect(run.status).toBe("Waiting");
      const [d] = await pending(chat.id);
      expect(d!.request.app.binding).toBe("work_calendar.create_event");
      expect(d!.request.context?.taint).toBe("this program read content from Notes, which may contain instructions");
      expect(d!.request.context?.provenance).toEqual([
        { path: "title", from: [{ index: 0, binding: "notes.read_note" }] },
      ]);
      expect(d!.tool?.annotations.readOnly).toBe(false);

      // A chat's grant does not reach past the taint; the run's grant does.
      await caller.decisions.decide({ id: d!.id, decision: "allow", remember: { scope: "chat", match: "binding" } });
      expect((await settle(run.id)).status).toBe("Completed");
      const again = await caller.codeRuns.runOnServer({ chatId: chat.id, code: READ_THEN_WRITE, reason: "r" });
      expect(again.status).toBe("Waiting");

      // A read-only call after the taint is not escalated.
      const reads = `await apps.notes.read_note({ id: "note_seed_1" })
return (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length`;
      expect((await caller.codeRuns.runOnServer({ chatId: chat.id, code: reads, reason: "r" })).status).toBe(
        "Completed",
      );
    } finally {
      await caller.connections.update({ id: "conn_notes", patch: { untrustedContent: null } });
      await caller.connections.setPolicies({ id: "conn_work_calendar", policies: { "create-event": null } });
    }
  });

  it("defaults: a tool with openWorldHint is untrusted, its connection is not; only admins set the flag; bad values are named", async () => {
    const caller = t.caller(t.admin);
    const email = (await caller.connections.list()).find((c) => c.id === "conn_email")!;
    expect(email.untrustedContent).toBe(false);
    expect(email.untrustedContentSet).toBeNull();
    expect(email.tools.find((x) => x.name === "send-email")!.untrustedContent).toBe(true);
    expect(email.tools.find((x) => x.name === "list-sent")!.untrustedContent).toBe(false);
    const bad = await caller.connections
      .update({ id: "conn_email", patch: { untrustedContent: "yes" as never } })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("untrustedContent");
    const member = await makePerson(t, "member");
    const m = await t
      .caller(member)
      .connections.update({ id: "conn_email", patch: { untrustedContent: true } })
      .catch((e: TRPCError) => e);
    expect((m as TRPCError).code).toBe("FORBIDDEN");
    // An http connection added by URL is untrusted until an admin says otherwise.
    const web = await caller.connections.create({
      name: "Web",
      transport: { type: "http", url: "http://127.0.0.1:9/mcp" },
    });
    expect(web).toMatchObject({ untrustedContent: true, untrustedContentSet: null });
    await caller.connections.remove({ id: web.id });
  });
});
