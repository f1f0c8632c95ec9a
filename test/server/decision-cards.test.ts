/**
 * One decision card per pause (issue 13, items 1, 4, 6) against the real built-in Email and Notes apps:
 * a paused call's promise stays pending while the program runs on, so 20 parallel sends are one pause
 * and one re-run; ask calls after an awaited allowed call join the same pause; the batch answer is all
 * or nothing; the record says who decided each call and when; a program that returns while calls wait
 * completes and those calls are withdrawn, never sent.
 */

import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

async function sentEmails() {
  const entry = t.platform.apps.resolve("email.list_sent")!;
  const result = await t.platform.apps.call(entry, {});
  return (result.structuredContent as { emails: { to: string; subject: string }[] }).emails;
}

let emailsBefore = 0;
beforeEach(async () => {
  emailsBefore = (await sentEmails()).length;
});

const attempt = async (runId: string) =>
  (await t.platform.db.query<{ attempt: number }>("select attempt from code_runs where id = $1", [runId]))[0]?.attempt;

const PARALLEL_20 = `const sent = await Promise.all(Array.from({ length: 20 }, (_, i) =>
  apps.email.send_email({ to: "p" + i + "@example.com", subject: "parallel " + i, body: "hi" })
    .then((r) => r.structuredContent.id, (e) => e.name)))
return sent`;

const code = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: TRPCError) => e.code,
  );

async function waitingRun(program: string, principal = t.admin) {
  const caller = t.caller(principal);
  const chat = await caller.chats.create({});
  const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: program, reason: "cards" });
  return { caller, chat, record };
}

describe("what a card is told about the tool", () => {
  it("names the arguments the tool's input schema does not list, and none when it lists them all", async () => {
    const { caller, record } = await waitingRun(`await Promise.all([
  apps.email.send_email({ to: "a@example.com", subject: "s", body: "b", cc: "boss@example.com", note: 1 }),
  apps.email.send_email({ to: "b@example.com", subject: "s", body: "b" }),
])`);
    const pending = await caller.decisions.list({ runId: record.id, status: "pending" });
    expect(pending.map((d) => d.tool?.undeclared)).toEqual([["cc", "note"], []]);
  });
});

describe("one card per pause", () => {
  it("20 parallel writes are one pause: one list by runId, one batch allow, one re-run, 20 sent", async () => {
    const { caller, record } = await waitingRun(PARALLEL_20);
    expect(record.status).toBe("Waiting");
    expect(record.calls).toHaveLength(20);
    expect(await attempt(record.id)).toBe(1);
    const pending = await caller.decisions.list({ runId: record.id, status: "pending" });
    expect(pending.map((d) => d.request.code.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect((await sentEmails()).length).toBe(emailsBefore);

    await caller.decisions.decideMany({ items: pending.map((d) => ({ id: d.id, decision: "allow" as const })) });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Completed");
    expect(await attempt(record.id)).toBe(2);
    expect(
      (done.result as { value: string[] }).value.every((id) => typeof id === "string" && id !== "AppCallDenied"),
    ).toBe(true);
    expect((await sentEmails()).length).toBe(emailsBefore + 20);
    for (const call of done.calls) {
      expect(call.decision).toEqual({ by: { id: t.admin.userId, name: expect.any(String) }, at: expect.any(Number) });
    }
  });

  it("ask calls issued after an awaited allowed call join the same pause; allowed reads go out meanwhile", async () => {
    const program = `const first = apps.email.send_email({ to: "a@example.com", subject: "first", body: "1" })
const note = await apps.notes.read_note({ id: "note_seed_1" })
const second = apps.email.send_email({ to: "b@example.com", subject: note.structuredContent.title, body: "2" })
const other = await apps.notes.read_note({ id: "note_seed_2" })
const [a, b] = await Promise.all([first, second])
return [a.structuredContent.id !== b.structuredContent.id, other.structuredContent.title]`;
    const { caller, record } = await waitingRun(program);
    expect(record.status).toBe("Waiting");
    expect(record.calls.map((c) => [c.binding, c.app?.status ?? null])).toEqual([
      ["email.send_email", null],
      ["notes.read_note", "Completed"],
      ["email.send_email", null],
      ["notes.read_note", "Completed"],
    ]);
    const pending = await caller.decisions.list({ runId: record.id });
    expect(pending.map((d) => [d.request.code.index, d.request.app.arguments])).toEqual([
      [0, { to: "a@example.com", subject: "first", body: "1" }],
      [2, { to: "b@example.com", subject: "Q4 planning", body: "2" }],
    ]);
    // One answer alone does not re-run the program: the other call still waits.
    await caller.decisions.decide({ id: pending[0]!.id, decision: "allow" });
    await t.platform.settled();
    expect((await caller.codeRuns.byId({ id: record.id })).status).toBe("Waiting");
    expect(await attempt(record.id)).toBe(1);
    await caller.decisions.decide({ id: pending[1]!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.status).toBe("Completed");
    expect(done.result).toMatchObject({ value: [true, "Offsite ideas"] });
    expect(await attempt(record.id)).toBe(2);
    expect((await sentEmails()).length).toBe(emailsBefore + 2);
  });

  it("per call: allow one, deny the other; the denied one throws AppCallDenied and is never sent", async () => {
    const program = `const r = await Promise.allSettled([
  apps.email.send_email({ to: "yes@example.com", subject: "yes", body: "1" }),
  apps.email.send_email({ to: "no@example.com", subject: "no", body: "2" }),
])
return r.map((x) => x.status === "fulfilled" ? "sent" : x.reason.name)`;
    const { caller, record } = await waitingRun(program);
    const [yes, no] = await caller.decisions.list({ runId: record.id });
    await caller.decisions.decideMany({
      items: [
        { id: yes!.id, decision: "allow" },
        { id: no!.id, decision: "deny" },
      ],
    });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: record.id });
    expect(done.result).toMatchObject({ _tag: "Completed", value: ["sent", "AppCallDenied"] });
    expect(done.calls[1]?.rejection?.name).toBe("AppCallDenied");
    expect(done.calls[1]?.decision?.by).toEqual({ id: t.admin.userId, name: expect.any(String) });
    const mails = await sentEmails();
    expect(mails.length).toBe(emailsBefore + 1);
    expect(mails.some((m) => m.to === "no@example.com")).toBe(false);
  });

  it("a batch is all or nothing: an already-taken or a stranger's decision refuses it and changes nothing", async () => {
    const owner = await makePerson(t, "member");
    const stranger = await makePerson(t, "member");
    const noApps = await makePerson(t, "member", ["sessions.read", "sessions.write"]);
    const mine = await waitingRun(PARALLEL_20.replace("length: 20", "length: 3"), owner);
    const theirs = await waitingRun(PARALLEL_20.replace("length: 20", "length: 1"), stranger);
    const pending = await mine.caller.decisions.list({ runId: mine.record.id });
    const [foreign] = await t.caller(stranger).decisions.list({ runId: theirs.record.id });
    expect(pending).toHaveLength(3);

    await mine.caller.decisions.decide({ id: pending[0]!.id, decision: "deny" });
    const conflict = await mine.caller.decisions
      .decideMany({ items: pending.map((d) => ({ id: d.id, decision: "allow" as const })) })
      .catch((e: TRPCError) => e);
    expect((conflict as TRPCError).code).toBe("CONFLICT");
    expect((conflict as TRPCError).message).toContain(pending[0]!.id);
    expect(
      await code(
        mine.caller.decisions.decideMany({
          items: [
            { id: pending[1]!.id, decision: "allow" },
            { id: foreign!.id, decision: "allow" },
          ],
        }),
      ),
    ).toBe("NOT_FOUND");
    expect(
      await code(t.caller(noApps).decisions.decideMany({ items: [{ id: pending[1]!.id, decision: "allow" }] })),
    ).toBe("FORBIDDEN");
    expect(
      await code(t.caller(null).decisions.decideMany({ items: [{ id: pending[1]!.id, decision: "allow" }] })),
    ).toBe("UNAUTHORIZED");
    const bad = await mine.caller.decisions
      .decideMany({ items: [{ id: pending[1]!.id, decision: "maybe" as "allow" }] })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("decision");
    expect(await code(mine.caller.decisions.decideMany({ items: [] }))).toBe("BAD_REQUEST");

    const still = await mine.caller.decisions.list({ runId: mine.record.id, status: "pending" });
    expect(still.map((d) => d.id)).toEqual([pending[1]!.id, pending[2]!.id]);
    expect((await t.caller(stranger).decisions.list({ runId: theirs.record.id }))[0]?.status).toBe("pending");
    expect(await t.caller(stranger).decisions.list({ runId: mine.record.id })).toEqual([]);
    expect((await mine.caller.codeRuns.byId({ id: mine.record.id })).status).toBe("Waiting");
    expect((await sentEmails()).length).toBe(emailsBefore);
  });

  it("decisions taken while the page's program still runs re-run it as soon as its attempt ends waiting", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const program = `await apps.email.send_email({ to: "page@example.com", subject: "page", body: "1" }); return "sent"`;
    const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: program, reason: "page" });
    const args = JSON.stringify({ body: "1", subject: "page", to: "page@example.com" });
    const answer = await caller.codeRuns.appCall({
      runId: ticket!.runId,
      attempt: 1,
      index: 0,
      binding: "email.send_email",
      argsJson: args,
    });
    expect(answer).toEqual({ type: "pause" });
    // Still Running: the page's program could go on; deciding now does not start a second attempt.
    expect((await caller.codeRuns.byId({ id: ticket!.runId })).status).toBe("Running");
    const [decision] = await caller.decisions.list({ runId: ticket!.runId });
    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    expect(await attempt(ticket!.runId)).toBe(1);
    await caller.codeRuns.finish({
      runId: ticket!.runId,
      attempt: 1,
      outcome: { status: "waiting", index: 0, logs: [], output: [], completionOrder: [] },
    });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: ticket!.runId });
    expect(done.status).toBe("Completed");
    expect(done.result).toMatchObject({ value: "sent" });
    expect(await attempt(ticket!.runId)).toBe(2);
    expect((await sentEmails()).length).toBe(emailsBefore + 1);
  });
});

describe("a program that returns while calls wait", () => {
  it("completes; its waiting calls are withdrawn, never sent, and listed as Withdrawn", async () => {
    const program = `const pending = apps.email.send_email({ to: "late@example.com", subject: "late", body: "x" })
pending.catch(() => {})
const note = await apps.notes.read_note({ id: "note_seed_1" })
return note.structuredContent.title`;
    const { caller, record } = await waitingRun(program);
    expect(record.status).toBe("Completed");
    expect(record.result).toMatchObject({ _tag: "Completed", value: "Q4 planning" });
    expect(record.calls[0]).toMatchObject({
      binding: "email.send_email",
      app: null,
      decision: null,
      rejection: { name: "Withdrawn", message: expect.stringContaining("not sent") },
    });
    const [withdrawn] = await caller.decisions.list({ runId: record.id });
    expect(withdrawn?.status).toBe("withdrawn");
    expect(await code(caller.decisions.decide({ id: withdrawn!.id, decision: "allow" }))).toBe("CONFLICT");
    await t.platform.settled();
    expect((await sentEmails()).length).toBe(emailsBefore);
    expect(await attempt(record.id)).toBe(1);
  });

  it("a program that fails while a call waits withdraws it too", async () => {
    const program = `apps.email.send_email({ to: "x@example.com", subject: "x", body: "x" }).catch(() => {})
await apps.notes.read_note({ id: "note_seed_1" })
throw new Error("boom")`;
    const { caller, record } = await waitingRun(program);
    expect(record.status).toBe("Failed");
    expect(record.calls[0]?.rejection?.name).toBe("Withdrawn");
    expect((await caller.decisions.list({ runId: record.id }))[0]?.status).toBe("withdrawn");
  });
});
