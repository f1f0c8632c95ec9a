/**
 * Decisions and replay (seed 001's flow) through the services: a call with policy `ask` pauses the
 * program; after the decision the server re-runs it from the top, replaying recorded calls without
 * contacting the App; deny throws AppCallDenied; mismatches stop before anything is sent; a write whose
 * outcome is unknown is never resent; several pauses; access rules; Interrupted; cancel; rotate-key.
 */

import { randomBytes } from "node:crypto";
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { reencryptAll } from "@/server/cli/rotate-key";
import { makeKeyRing, valueKeyId } from "@/server/crypto";
import { ENCRYPTED_COLUMNS } from "@/server/db/encrypted-columns";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { requestDecision } from "@/server/services/decisions";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const SEND_NOTES = `const [note, other] = await Promise.all([
  apps.notes.read_note({ id: "note_seed_1" }),
  apps.notes.read_note({ id: "note_seed_2" }),
])
let sent
try {
  sent = await apps.email.send_email({ to: "team@example.com", subject: note.structuredContent.title, body: note.structuredContent.body })
} catch (error) {
  return { denied: error.name, details: error.details }
}
return { sent: sent.structuredContent.id, other: other.structuredContent.title, at: Date.now(), r: Math.random() }`;

async function sentEmails() {
  const entry = t.platform.apps.resolve("email.list_sent")!;
  const result = await t.platform.apps.call(entry, {});
  return (result.structuredContent as { emails: { to: string; subject: string }[] }).emails;
}

async function operations(runId: string) {
  return t.platform.db.query<{ tool: string; status: string }>(
    "select tool, status from app_operations where run_id = $1 order by started_at",
    [runId],
  );
}

async function waitingRun(code = SEND_NOTES) {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({});
  const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code, reason: "Send the notes to the team." });
  return { caller, chat, record };
}

let emailsBefore = 0;
beforeEach(async () => {
  emailsBefore = (await sentEmails()).length;
});

describe("decisions and replay", () => {
  it("pauses at an ask call, stores a seed-shaped request, and after allow replays the reads and sends once", async () => {
    const { caller, record } = await waitingRun();
    expect(record.status).toBe("Waiting");
    expect(record.calls.map((c) => [c.index, c.binding, c.app?.status ?? null])).toEqual([
      [0, "notes.read_note", "Completed"],
      [1, "notes.read_note", "Completed"],
      [2, "email.send_email", null],
    ]);
    const [decision] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    expect(decision!.request).toMatchObject({
      capability: { action: "apps.call", target: "conn_email/send-email" },
      toolCallId: record.id,
      app: {
        id: "conn_email",
        callId: `${record.id}:2`,
        arguments: { to: "team@example.com", subject: "Q4 planning" },
      },
      code: { run: record.id, index: 2, code: SEND_NOTES },
    });
    expect((await sentEmails()).length).toBe(emailsBefore);

    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Completed");
    const value = (done.result as { value: { sent: string; other: string; at: number; r: number } }).value;
    expect(value.other).toBe("Offsite ideas");
    expect(value.at).toBe(record.createdAt);
    expect(done.calls.map((c) => c.app?.status)).toEqual(["Completed", "Completed", "Completed"]);
    expect(await operations(record.id)).toHaveLength(3);
    const mails = await sentEmails();
    expect(mails.length).toBe(emailsBefore + 1);
    expect(
      mails.filter((m) => m.subject === "Q4 planning" && m.to === "team@example.com").length,
    ).toBeGreaterThanOrEqual(1);

    const again = await caller.decisions.decide({ id: decision!.id, decision: "deny" }).catch((e: TRPCError) => e);
    expect((again as TRPCError).code).toBe("CONFLICT");
  });

  it("deny: the program catches AppCallDenied and nothing is sent", async () => {
    const { caller, record } = await waitingRun();
    const [decision] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    await caller.decisions.decide({ id: decision!.id, decision: "deny" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Completed");
    expect((done.result as { value: { denied: string } }).value.denied).toBe("AppCallDenied");
    expect(done.calls[2]?.rejection?.name).toBe("AppCallDenied");
    expect(done.calls[2]?.app).toBeNull();
    expect((await sentEmails()).length).toBe(emailsBefore);
  });

  it("a call that differs from the record stops the run with ReplayMismatch before anything is sent", async () => {
    const { caller, record } = await waitingRun();
    // The recorded call 0 had other arguments than the program makes now.
    await t.platform.db.query("update code_run_calls set args_enc = $2 where run_id = $1 and idx = 0", [
      record.id,
      t.platform.seal(`code_run_calls:${record.id}:0:args`, JSON.stringify('{"id":"note_seed_3"}')),
    ]);
    const [decision] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Failed");
    expect(done.result).toMatchObject({ _tag: "Failed", reason: "ReplayMismatch" });
    expect((await sentEmails()).length).toBe(emailsBefore);
    expect(await operations(record.id)).toHaveLength(2);
  });

  it("a connection that changed while the run waited is a ReplayMismatch, and nothing is sent", async () => {
    const { caller, record } = await waitingRun();
    await t.platform.db.query("update code_run_calls set source = $2 where run_id = $1 and idx = 2", [
      record.id,
      JSON.stringify({ connectionId: "conn_gone", connectionName: "Old email", name: "send-email" }),
    ]);
    const [decision] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.result).toMatchObject({ _tag: "Failed", reason: "ReplayMismatch" });
    expect((await sentEmails()).length).toBe(emailsBefore);
  });

  it("a write sent but never recorded (a crash in between) is Unknown, is not sent again and waits for a person", async () => {
    const { caller, record } = await waitingRun();
    const [decision] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    // Simulate: the decided call was sent, and the process died before its outcome was stored.
    await t.platform.db.query(
      `insert into app_operations (id, execution_id, chat_id, run_id, call_index, connection_id, tool, status, args_enc, started_at)
       values ('op_crashed', 'exe_crashed', $1, $2, 2, 'conn_email', 'send-email', 'Running', $4, $3)`,
      [
        record.chat,
        record.id,
        Date.now() - 10 * 60_000,
        t.platform.seal("app_operations:op_crashed:args", JSON.stringify("{}")),
      ],
    );
    await t.platform.db.query("update code_run_calls set operation_id = 'op_crashed' where run_id = $1 and idx = 2", [
      record.id,
    ]);
    await t.platform.db.query("update decisions set status = 'allowed' where id = $1", [decision!.id]);
    await sweepRuns(t.platform);
    expect(
      (await t.platform.db.query<{ status: string }>("select status from app_operations where id = 'op_crashed'"))[0]
        ?.status,
    ).toBe("Unknown");
    const { resumeRun } = await import("@/server/services/code-runs/runs");
    await resumeRun(t.platform, record.id);
    await t.platform.settled();
    // It waits for a person (Mark as done or Send again: unknown-writes.test.ts), never sent by itself.
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Waiting");
    expect(done.calls[2]?.unknown?.state).toBe("pending");
    expect((await sentEmails()).length).toBe(emailsBefore);
  });

  it("a decision whose re-run never started (the process stopped) is picked up by the sweep", async () => {
    const { caller, record } = await waitingRun();
    const [decision] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    await t.platform.db.query("update decisions set status = 'allowed' where id = $1", [decision!.id]);
    await t.platform.db.query("update code_runs set updated_at = $2 where id = $1", [
      record.id,
      Date.now() - 10 * 60_000,
    ]);
    const swept = await sweepRuns(t.platform);
    expect(swept.resumed).toContain(record.id);
    await t.platform.settled();
    expect((await caller.codeRuns.byId({ id: record.id })).status).toBe("Completed");
    expect((await sentEmails()).length).toBe(emailsBefore + 1);
  });

  it("a run may pause and resume several times; the record keeps one list of calls", async () => {
    const code = `const a = await apps.email.send_email({ to: "a@example.com", subject: "one", body: "1" })
const b = await apps.email.send_email({ to: "b@example.com", subject: "two", body: "2" })
return [a.structuredContent.id, b.structuredContent.id].length`;
    const { caller, record } = await waitingRun(code);
    for (let round = 0; round < 2; round++) {
      const pending = await caller.decisions.list({ status: "pending", chatId: record.chat });
      expect(pending).toHaveLength(1);
      expect(pending[0]!.request.code.index).toBe(round);
      await caller.decisions.decide({ id: pending[0]!.id, decision: "allow" });
      await t.platform.settled();
    }
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Completed");
    expect(done.calls.map((c) => c.index)).toEqual([0, 1]);
    expect((await sentEmails()).length).toBe(emailsBefore + 2);
    const [row] = await t.platform.db.query<{ attempt: number }>("select attempt from code_runs where id = $1", [
      record.id,
    ]);
    expect(row?.attempt).toBe(3);
  });

  it("cancel ends a waiting run and withdraws its decision", async () => {
    const { caller, record } = await waitingRun();
    const cancelled = await caller.codeRuns.cancel({ id: record.id });
    expect(cancelled.status).toBe("Cancelled");
    expect(await caller.decisions.list({ status: "pending", chatId: record.chat })).toEqual([]);
    const [withdrawn] = await caller.decisions.list({ status: "withdrawn", chatId: record.chat });
    const late = await caller.decisions.decide({ id: withdrawn!.id, decision: "allow" }).catch((e: TRPCError) => e);
    expect((late as TRPCError).code).toBe("CONFLICT");
    const execution = await caller.executions.byId({ executionId: record.executionId });
    expect(execution).toMatchObject({ kind: "code_run", id: record.id, status: "Cancelled" });
  });

  it("a person's allow after an admin set the tool to deny sends nothing: the stored policy binds the re-run", async () => {
    const { caller, record } = await waitingRun();
    expect(record.status).toBe("Waiting");
    const [pending] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    await caller.connections.setPolicies({ id: "conn_email", policies: { "send-email": "deny" } });
    try {
      await caller.decisions.decide({ id: pending!.id, decision: "allow" });
      await t.platform.settled();
      const done = await caller.codeRuns.byId({ id: record.id });
      expect(done.status).toBe("Completed");
      expect(done.result).toMatchObject({ _tag: "Completed", value: { denied: "AppCallDenied" } });
      expect((await sentEmails()).length).toBe(emailsBefore);
      expect((await operations(record.id)).map((o) => o.tool)).not.toContain("send-email");
    } finally {
      await caller.connections.setPolicies({ id: "conn_email", policies: { "send-email": null } });
    }
  });

  it("a call whose arguments do not fit the tool's schema is refused at once: no person is asked, nothing is sent", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `try {
  await apps.email.send_email({ to: "not-an-email", subject: "unfit", body: "b" })
  return "sent"
} catch (e) {
  return [e.name, e.details.reason, e.message]
}`,
    });
    expect(record.status).toBe("Completed");
    const [name, reason, message] = (record.result as { value: [string, string, string] }).value;
    expect([name, reason]).toEqual(["AppCallFailed", "invalid_arguments"]);
    expect(message).toContain("The arguments of email.send_email do not fit its schema");
    expect(message).toContain("args.to");
    expect(record.calls[0]!.rejection).toMatchObject({ name: "AppCallFailed" });
    expect(await caller.decisions.list({ chatId: chat.id })).toEqual([]);
    expect((await sentEmails()).filter((m) => m.subject === "unfit")).toEqual([]);
    // The same call with fitting arguments still asks.
    const fits = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `return (await apps.email.send_email({ to: "a@example.com", subject: "fits", body: "b" })).structuredContent.id`,
    });
    expect(fits.status).toBe("Waiting");
  });

  it("a direct call allowed after an admin set its tool to deny is not sent", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const entry = t.platform.apps.resolve("email.send_email")!;
    const args = { to: "direct@example.com", subject: "direct after deny", body: "-" };
    const decisionId = await requestDecision(t.platform, {
      chatId: chat.id,
      runId: null,
      index: null,
      toolCallId: "tc_direct_deny",
      callId: "tc_direct_deny",
      entry,
      argsJson: JSON.stringify(args),
      capability: { action: "apps.call", target: "conn_email/send-email" },
      code: "",
    });
    const settled: string[] = [];
    const onSettled = (e: { summary: string }) => settled.push(e.summary);
    t.platform.events.on("direct-call-settled", onSettled);
    await caller.connections.setPolicies({ id: "conn_email", policies: { "send-email": "deny" } });
    try {
      await caller.decisions.decide({ id: decisionId, decision: "allow" });
      await t.platform.settled();
      expect(settled).toEqual(["The call apps.email.send_email was not sent: the platform's policy denies it now."]);
      expect((await sentEmails()).filter((m) => m.subject === args.subject)).toEqual([]);
    } finally {
      t.platform.events.off("direct-call-settled", onSettled);
      await caller.connections.setPolicies({ id: "conn_email", policies: { "send-email": null } });
    }
  });

  it("cancel of a run that has ended answers with its record and settles, withdraws or announces nothing", async () => {
    const { caller, record } = await waitingRun();
    const [pending] = await caller.decisions.list({ status: "pending", chatId: record.chat });
    await caller.decisions.decide({ id: pending!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Completed");
    let announced = 0;
    const onCancel = () => {
      announced += 1;
    };
    t.platform.events.on("run-cancel", onCancel);
    try {
      const again = await caller.codeRuns.cancel({ id: record.id });
      expect(again.status).toBe("Completed");
      expect(again.result).toEqual(done.result);
    } finally {
      t.platform.events.off("run-cancel", onCancel);
    }
    expect(announced).toBe(0);
    expect(await caller.decisions.list({ status: "withdrawn", chatId: record.chat })).toEqual([]);
  });

  it("only the chat's owner or an admin decides; readers see runs; strangers and keys without apps.use do not", async () => {
    const owner = await makePerson(t, "member");
    const reader = await makePerson(t, "member");
    const stranger = await makePerson(t, "member");
    const noApps = await makePerson(t, "member", ["sessions.read", "sessions.write"]);
    const ownerCaller = t.caller(owner);
    const chat = await ownerCaller.chats.create({});
    const record = await ownerCaller.codeRuns.runOnServer({ chatId: chat.id, code: SEND_NOTES });
    expect(record.status).toBe("Waiting");
    await ownerCaller.chats.share({ chatId: chat.id, userId: reader.userId });
    const code = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: TRPCError) => e.code,
      );

    expect(await code(t.caller(reader).codeRuns.byId({ id: record.id }))).toBe("ok");
    expect(await code(t.caller(stranger).codeRuns.byId({ id: record.id }))).toBe("NOT_FOUND");
    expect(await code(t.caller(noApps).codeRuns.byId({ id: record.id }))).toBe("FORBIDDEN");
    const [decision] = await ownerCaller.decisions.list({ status: "pending", chatId: chat.id });
    expect(await t.caller(reader).decisions.list({ chatId: chat.id })).toEqual([]);
    expect(await code(t.caller(reader).decisions.decide({ id: decision!.id, decision: "allow" }))).toBe("FORBIDDEN");
    expect(await code(t.caller(stranger).decisions.decide({ id: decision!.id, decision: "allow" }))).toBe("NOT_FOUND");
    // Told as for an id that does not exist: the message does not say that it does.
    const message = (id: string) =>
      t
        .caller(stranger)
        .decisions.decide({ id, decision: "allow" })
        .catch((e: TRPCError) => e.message);
    expect(await message(decision!.id)).toBe(`No such decision: ${decision!.id}.`);
    expect(await message("dec_does_not_exist")).toBe("No such decision: dec_does_not_exist.");
    // A reader sees the run but may not stop it (told so); a stranger is not told the run exists.
    expect(await code(t.caller(reader).codeRuns.cancel({ id: record.id }))).toBe("FORBIDDEN");
    expect(await code(t.caller(stranger).codeRuns.cancel({ id: record.id }))).toBe("NOT_FOUND");
    expect((await ownerCaller.codeRuns.byId({ id: record.id })).status).toBe("Waiting");

    await ownerCaller.chats.unshare({ chatId: chat.id, userId: reader.userId });
    expect(await code(t.caller(reader).codeRuns.byId({ id: record.id }))).toBe("NOT_FOUND");

    await ownerCaller.decisions.decide({ id: decision!.id, decision: "deny" });
    await t.platform.settled();
    expect((await ownerCaller.codeRuns.byId({ id: record.id })).status).toBe("Completed");
  });

  it("a waiting run whose caller or stored step is gone ends as Interrupted; reading never restarts it", async () => {
    const { caller, record } = await waitingRun();
    await t.platform.db.query("delete from decisions where run_id = $1", [record.id]);
    await caller.codeRuns.byId({ id: record.id });
    expect((await caller.codeRuns.byId({ id: record.id })).status).toBe("Waiting");
    const swept = await sweepRuns(t.platform);
    expect(swept.interrupted).toContain(record.id);
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.result).toMatchObject({ _tag: "Failed", reason: "Interrupted" });
    expect(done.calls).toHaveLength(3);

    const member = await makePerson(t, "member");
    const chat = await t.caller(member).chats.create({});
    const mine = await t.caller(member).codeRuns.runOnServer({ chatId: chat.id, code: SEND_NOTES });
    await t.platform.db.query("update api_keys set revoked_at = $1 where id = $2", [Date.now(), member.keyId]);
    const [decision] = await caller.decisions.list({ status: "pending", chatId: chat.id });
    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    const after = await caller.codeRuns.byId({ id: mine.id });
    expect(after.result).toMatchObject({ _tag: "Failed", reason: "Interrupted" });
    expect((await sentEmails()).length).toBe(emailsBefore);
  });

  it("rotate-key re-encrypts every value under a new key while the old one still decrypts", async () => {
    const { caller, record } = await waitingRun();
    const before = await caller.codeRuns.byId({ id: record.id });
    const next = makeKeyRing(randomBytes(32), [...t.platform.keys.keys.values()]);
    const moved = await reencryptAll(t.platform.db, next);
    expect(moved).toBeGreaterThan(0);
    for (const col of ENCRYPTED_COLUMNS) {
      const rows = await t.platform.db.query<{ v: string }>(
        `select ${col.column} as v from ${col.table} where ${col.column} is not null and ${col.column} like 'enc1:%'`,
      );
      for (const r of rows) expect(valueKeyId(r.v), `${col.table}.${col.column}`).toBe(next.currentId);
    }
    t.platform.keys.currentId = next.currentId;
    for (const [id, key] of next.keys) t.platform.keys.keys.set(id, key);
    expect(await caller.codeRuns.byId({ id: record.id })).toEqual(before);
    expect(await reencryptAll(t.platform.db, next)).toBe(0);
  });
});
