/**
 * Secrets cannot be laundered through an App that stores data: a program writes `vault.notes.token`
 * into the built-in Notes app and reads it back, in the same run and in a later run (and a direct read
 * of another person), and only ever gets `⟦hidden:notes/token⟧`. Who may use an entry: an admin-only
 * entry is invisible and unusable to a member (VaultDenied, nothing sent); a member it names may use it.
 * Page reads of App data (the outbox) pass the same capability check as a program's call.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runTurnToEnd } from "@/server/services/agent/turns";
import { lastIsTool, lastToolResult, scriptedModel } from "../helpers/mock-model";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const SECRET = "nts_LaunderedSecret_41b7c0de";
let t: TestPlatform;

beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  await t
    .caller(t.admin)
    .vault.create({ name: "notes/token", secret: SECRET, allow: [{ connection: "notes", tool: "write-note" }] });
}, 60_000);
afterAll(() => t?.close());

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: TRPCError) => e.code,
  );

/** Runs on the server, allowing every decision it asks for, until the run ends. */
async function runAllowing(caller: ReturnType<TestPlatform["caller"]>, chatId: string, code: string) {
  let record = await caller.codeRuns.runOnServer({ chatId, code });
  for (let i = 0; i < 5 && record.status === "Waiting"; i++) {
    for (const d of await caller.decisions.list({ chatId, status: "pending" }))
      await caller.decisions.decide({ id: d.id, decision: "allow" });
    await t.platform.settled();
    record = await caller.codeRuns.byId({ id: record.id });
  }
  return record;
}

describe("vault secrets cannot be laundered", () => {
  let noteId = "";

  it("written into Notes and read back in the same run: the program gets ⟦hidden:…⟧", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await runAllowing(
      caller,
      chat.id,
      `const w = await apps.notes.write_note({ title: "launder", body: "token " + vault.notes.token })
const r = await apps.notes.read_note({ id: w.structuredContent.id })
return { id: w.structuredContent.id, body: r.structuredContent.body, text: r.content[0].text }`,
    );
    expect(record.status).toBe("Completed");
    const value = (record.result as { value: { id: string; body: string; text: string } }).value;
    noteId = value.id;
    expect(value.body).toBe("token ⟦hidden:notes/token⟧");
    expect(value.text).toContain("⟦hidden:notes/token⟧");
    expect(JSON.stringify(record)).not.toContain(SECRET);
    // The App really stored the plaintext: only the answers were redacted.
    const stored = await t.platform.db.query<{ body: string }>("select body from notes where id = $1", [noteId]);
    expect(stored[0]!.body).toBe(`token ${SECRET}`);
  });

  it("read back in a later run, which never referenced the entry: still hidden", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `const r = await apps.notes.read_note({ id: ${JSON.stringify(noteId)} })
return r.structuredContent.body`,
    });
    expect(record.status).toBe("Completed");
    expect((record.result as { value: string }).value).toBe("token ⟦hidden:notes/token⟧");
    expect(JSON.stringify(record)).not.toContain(SECRET);
  });

  it("a direct (model) tool call of read_note gets it hidden too, and the model is never sent the secret", async () => {
    const seen: unknown[] = [];
    t.platform.modelOverride = scriptedModel((call) => {
      if (!lastIsTool(call)) return { toolCall: { name: "notes__read_note", input: { id: noteId } } };
      seen.push(lastToolResult(call));
      return { text: "read" };
    });
    try {
      const chat = await t.caller(t.admin).chats.create({});
      const turn = await runTurnToEnd(
        { platform: t.platform, principal: t.admin },
        {
          chatId: chat.id,
          message: "read the note",
        },
      );
      expect(turn.status).toBe("Completed");
      expect(JSON.stringify(seen)).toContain("token ⟦hidden:notes/token⟧");
      expect(JSON.stringify(seen)).not.toContain(SECRET);
      expect(JSON.stringify(turn)).not.toContain(SECRET);
    } finally {
      t.platform.modelOverride = undefined;
    }
  });

  it("a direct (model) tool call with a reference its entry does not allow is VaultDenied before anyone is asked", async () => {
    await t.caller(t.admin).vault.create({
      name: "calendar/only",
      secret: "cal_OnlyForCalendar_7d21",
      allow: [{ connection: "work_calendar", tool: "create-event" }],
    });
    const seen: unknown[] = [];
    t.platform.modelOverride = scriptedModel((call) => {
      if (!lastIsTool(call)) {
        return {
          toolCall: { name: "notes__write_note", input: { title: "leak", body: "\u27E6vault:calendar/only\u27E7" } },
        };
      }
      seen.push(lastToolResult(call));
      return { text: "done" };
    });
    try {
      const chat = await t.caller(t.admin).chats.create({});
      const turn = await runTurnToEnd(
        { platform: t.platform, principal: t.admin },
        { chatId: chat.id, message: "write it" },
      );
      expect(turn.status).toBe("Completed");
      expect(seen).toEqual([{ error: { name: "VaultDenied", message: expect.stringContaining("Nothing was sent") } }]);
      expect(await t.caller(t.admin).decisions.list({ status: "pending", chatId: chat.id })).toEqual([]);
      const notes = await t.platform.db.query<{ n: number }>(
        "select count(*)::int as n from notes where title = 'leak'",
      );
      expect(notes[0]!.n).toBe(0);
    } finally {
      t.platform.modelOverride = undefined;
    }
  });

  it("a member's direct call that an admin allows is sent as the member (the member's vault rights), not as the admin", async () => {
    const member = await makePerson(t, "member");
    await t.caller(t.admin).vault.create({
      name: "member/own",
      secret: "mem_OwnSecret_5b0e2a",
      allow: [{ connection: "notes", tool: "write-note" }],
      usableBy: { users: [member.userId], roles: [] },
    });
    t.platform.modelOverride = scriptedModel((call) =>
      lastIsTool(call)
        ? { text: "asked" }
        : {
            toolCall: {
              name: "notes__write_note",
              input: { title: "as-member", body: "\u27E6vault:member/own\u27E7" },
            },
          },
    );
    try {
      const chat = await t.caller(member).chats.create({});
      await runTurnToEnd({ platform: t.platform, principal: member }, { chatId: chat.id, message: "write it" });
      const [decision] = await t.caller(t.admin).decisions.list({ status: "pending", chatId: chat.id });
      // The admin may decide in the member's chat; the admin may not use the member's entry.
      await t.caller(t.admin).decisions.decide({ id: decision!.id, decision: "allow" });
      await t.platform.settled();
      const notes = await t.platform.db.query<{ n: number }>(
        "select count(*)::int as n from notes where title = 'as-member'",
      );
      expect(notes[0]!.n).toBe(1);

      // Asked again, then the member's key is revoked before the admin allows: nothing is sent.
      await runTurnToEnd({ platform: t.platform, principal: member }, { chatId: chat.id, message: "again" });
      const [again] = await t.caller(t.admin).decisions.list({ status: "pending", chatId: chat.id });
      await t.platform.db.query("update api_keys set revoked_at = $2 where id = $1", [member.keyId, Date.now()]);
      const summaries: string[] = [];
      const onSettled = (e: { summary: string }) => summaries.push(e.summary);
      t.platform.events.on("direct-call-settled", onSettled);
      try {
        await t.caller(t.admin).decisions.decide({ id: again!.id, decision: "allow" });
        await t.platform.settled();
      } finally {
        t.platform.events.off("direct-call-settled", onSettled);
      }
      expect(summaries).toEqual([
        "The call apps.notes.write_note was not sent: the key that asked for it is revoked or may no longer use Apps.",
      ]);
      const after = await t.platform.db.query<{ n: number }>(
        "select count(*)::int as n from notes where title = 'as-member'",
      );
      expect(after[0]!.n).toBe(1);
    } finally {
      t.platform.modelOverride = undefined;
    }
  });

  it("a member who may not use the entry cannot read it back either", async () => {
    const member = await makePerson(t, "member");
    const chat = await t.caller(member).chats.create({});
    const record = await t.caller(member).codeRuns.runOnServer({
      chatId: chat.id,
      code: `return (await apps.notes.read_note({ id: ${JSON.stringify(noteId)} })).structuredContent.body`,
    });
    expect((record.result as { value: string }).value).toBe("token ⟦hidden:notes/token⟧");
  });

  it("a rotated secret is hidden, and so is the old one; a deleted entry's secret stays hidden", async () => {
    const caller = t.caller(t.admin);
    const next = "nts_RotatedSecret_99aa01";
    const gone = "del_DeletedSecret_31c9";
    await caller.vault.rotate({ name: "notes/token", secret: next });
    await caller.vault.create({ name: "soon/gone", secret: gone });
    await caller.vault.remove({ name: "soon/gone" });
    await t.platform.db.query("update notes set body = $1 where id = $2", [
      `new ${next} old ${SECRET} gone ${gone}`,
      noteId,
    ]);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `return (await apps.notes.read_note({ id: ${JSON.stringify(noteId)} })).structuredContent.body`,
    });
    expect((record.result as { value: string }).value).toBe(
      "new ⟦hidden:notes/token⟧ old ⟦hidden:notes/token⟧ gone ⟦hidden:soon/gone⟧",
    );
    await caller.vault.rotate({ name: "notes/token", secret: SECRET });
    await t.platform.db.query("update notes set body = $1 where id = $2", [`token ${SECRET}`, noteId]);
  });

  it("secrets shorter than 8 characters are refused with a clear message", async () => {
    const bad = await t
      .caller(t.admin)
      .vault.create({ name: "short/one", secret: "abc" })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("secret must be at least 8 characters");
  });

  it("a secret of spaces or of one repeated character is refused: it would hide ordinary text in every answer", async () => {
    for (const secret of ["        ", "--------", " a a a a a a ", "abababab", "\t\t\t\t\t\t\t\t"]) {
      const bad = await t
        .caller(t.admin)
        .vault.create({ name: "plain/text", secret })
        .catch((e: TRPCError) => e);
      expect((bad as TRPCError).code, JSON.stringify(secret)).toBe("BAD_REQUEST");
      expect((bad as TRPCError).message).toContain("secret must have at least 4 different characters besides spaces");
    }
    expect((await t.caller(t.admin).vault.list()).map((e) => e.name)).not.toContain("plain/text");
  });
});

describe("who may use a vault entry", () => {
  it("an admin-only entry (the default): a member does not see its name and a reference gives VaultDenied, nothing sent", async () => {
    const caller = t.caller(t.admin);
    await caller.vault.create({
      name: "admin/only",
      secret: "adm_OnlySecret_7f3e",
      allow: [{ connection: "notes", tool: "write-note" }],
    });
    const entry = (await caller.vault.list()).find((e) => e.name === "admin/only")!;
    expect(entry.usableBy).toEqual({ users: [], roles: ["admin"] });

    const member = await makePerson(t, "member");
    const chat = await t.caller(member).chats.create({});
    const record = await t.caller(member).codeRuns.runOnServer({
      chatId: chat.id,
      code: `const names = Object.keys(vault)
const seen = typeof vault.admin
try {
  await apps.notes.write_note({ title: "x", body: "⟦vault:admin/only⟧" })
  return { names, seen, sent: true }
} catch (error) {
  return { names, seen, name: error.name, message: error.message }
}`,
    });
    const value = (record.result as { value: { names: string[]; seen: string; name: string; message: string } }).value;
    expect(value.names).toEqual([]);
    expect(value.seen).toBe("undefined");
    expect(value.name).toBe("VaultDenied");
    expect(value.message).toContain("no entry admin/only you may use");
    expect(await t.platform.db.query("select id from app_operations where run_id = $1", [record.id])).toHaveLength(0);
    expect(await t.caller(t.admin).decisions.list({ chatId: chat.id, status: "pending" })).toEqual([]);
  });

  it("an admin's key without platform.admin counts as a member's for an admin-only entry: VaultDenied, nothing sent", async () => {
    // The entry made by the test above (admins only). An integration's key of an admin user, given only
    // apps.use and sessions, acts as the key's permissions say, as everywhere else (isAdmin).
    const limited = await makePerson(t, "admin", ["apps.use", "sessions.read", "sessions.write"]);
    expect(limited.role).toBe("admin");
    const chat = await t.caller(limited).chats.create({});
    const record = await t.caller(limited).codeRuns.runOnServer({
      chatId: chat.id,
      code: `const names = Object.keys(vault)
try {
  await apps.notes.write_note({ title: "x", body: "⟦vault:admin/only⟧" })
  return { names, sent: true }
} catch (error) {
  return { names, name: error.name }
}`,
    });
    expect(record.result).toMatchObject({ value: { names: [], name: "VaultDenied" } });
    expect(await t.platform.db.query("select id from app_operations where run_id = $1", [record.id])).toHaveLength(0);
  });

  it("a member the entry names may use it; an unknown user or role is refused with a clear message", async () => {
    const caller = t.caller(t.admin);
    const member = await makePerson(t, "member");
    const unknown = await caller.vault
      .setAccess({ name: "admin/only", usableBy: { users: ["usr_nobody"] } })
      .catch((e: TRPCError) => e);
    expect((unknown as TRPCError).message).toContain("usableBy.users: no such user usr_nobody");
    const badRole = await caller.vault
      .setAccess({ name: "admin/only", usableBy: { roles: ["owner" as never] } })
      .catch((e: TRPCError) => e);
    expect((badRole as TRPCError).message).toContain("usableBy.roles");
    const updated = await caller.vault.setAccess({
      name: "admin/only",
      usableBy: { roles: ["admin"], users: [member.userId] },
    });
    expect(updated.usableBy).toEqual({ roles: ["admin"], users: [member.userId] });

    const chat = await t.caller(member).chats.create({});
    const record = await t.caller(member).codeRuns.runOnServer({
      chatId: chat.id,
      code: `return { names: Object.keys(vault), ref: vault.admin.only }`,
    });
    expect((record.result as { value: unknown }).value).toEqual({ names: ["admin"], ref: "⟦vault:admin/only⟧" });
    const using = await t.caller(member).codeRuns.runOnServer({
      chatId: chat.id,
      code: `return await apps.notes.write_note({ title: "ok", body: vault.admin.only })`,
    });
    expect(using.status).toBe("Waiting");
    expect(await codeOf(t.caller(member).vault.list())).toBe("FORBIDDEN");
  });
});

describe("page reads of App data pass the capability check", () => {
  async function setListSent(policy: "allow" | "ask" | "deny") {
    await t.caller(t.admin).connections.setPolicies({ id: "conn_email", policies: { "list-sent": policy } });
  }

  it("deny: member and admin are refused with the policy's message; ask: refused, it needs a decision from a chat", async () => {
    const member = await makePerson(t, "member");
    try {
      await setListSent("deny");
      for (const who of [member, t.admin]) {
        const e = (await t
          .caller(who)
          .connections.emailOutbox()
          .catch((x: TRPCError) => x)) as TRPCError;
        expect(e.code).toBe("FORBIDDEN");
        expect(e.message).toContain("denies this call");
      }
      await setListSent("ask");
      const e = (await t
        .caller(member)
        .connections.emailOutbox()
        .catch((x: TRPCError) => x)) as TRPCError;
      expect(e.code).toBe("FORBIDDEN");
      expect(e.message).toContain("run it from a chat");
    } finally {
      await setListSent("allow");
    }
  });

  it("allow: an App operation like a program's, with every secret hidden; without apps.use: refused", async () => {
    const member = await makePerson(t, "member");
    await t.platform.db.query(
      "insert into emails (id, to_address, subject, body, sent_at) values ('mail_secret', 'a@example.com', 'leak', $1, $2)",
      [`body ${SECRET}`, Date.now()],
    );
    const before = await t.platform.db.query("select id from app_operations where tool = 'list-sent'");
    const outbox = await t.caller(member).connections.emailOutbox();
    expect(outbox.emails.find((m) => m.id === "mail_secret")?.body).toBe("body ⟦hidden:notes/token⟧");
    expect(JSON.stringify(outbox)).not.toContain(SECRET);
    expect(await t.platform.db.query("select id from app_operations where tool = 'list-sent'")).toHaveLength(
      before.length + 1,
    );
    const noApps = await makePerson(t, "member", ["sessions.read", "sessions.write"]);
    expect(await codeOf(t.caller(noApps).connections.emailOutbox())).toBe("FORBIDDEN");
  });
});

describe("an App's question is redacted too", () => {
  it("a secret in an elicitation message and in the answered result is hidden before it is stored or shown", async () => {
    const view = await t.platform.apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
    await t.platform.apps.setPolicies(view.id, { "trigger-elicitation-request": "allow" });
    const caller = t.caller(t.admin);
    // The everything server asks "Please provide inputs for the following fields:" and echoes the answer.
    await caller.vault.create({ name: "question/words", secret: "following fields" });
    await caller.vault.create({ name: "answer/name", secret: "Ada Lovelace" });
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: "const r = await apps.everything.trigger_elicitation_request({}); return r.content",
    });
    // The run waits for the person (the program's call is parked on the question).
    expect(record.status).toBe("Waiting");
    const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
    expect(pending!.message).toBe("Please provide inputs for the ⟦hidden:question/words⟧:");
    const stored = await t.platform.db.query<{ input_enc: string }>(
      "select input_enc from app_operations where id = $1",
      [pending!.operationId],
    );
    expect(t.platform.open(`app_operations:${pending!.operationId}:input`, stored[0]!.input_enc)).not.toContain(
      "following fields",
    );
    const answered = await caller.appOperations.answer({
      operationId: pending!.operationId,
      answer: { action: "accept", content: { name: "Ada Lovelace", check: true } },
    });
    expect(answered.status).toBe("Completed");
    await vi.waitFor(async () => expect((await caller.codeRuns.byId({ id: record.id })).status).toBe("Completed"), {
      timeout: 30_000,
      interval: 100,
    });
    const after = await caller.codeRuns.byId({ id: record.id });
    const result = JSON.stringify(after.calls[0]?.app?.result);
    expect(result).toContain("⟦hidden:answer/name⟧");
    expect(result).not.toContain("Ada Lovelace");
    const value = JSON.stringify((after.result as { value: unknown }).value);
    expect(value).toContain("⟦hidden:answer/name⟧");
    expect(value).not.toContain("Ada Lovelace");
  }, 60_000);
});
