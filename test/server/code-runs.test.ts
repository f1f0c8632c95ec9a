/**
 * Code runs through the service layer (tRPC createCaller, no HTTP): the seeds' calendar program on the
 * server runner against the real built-in Work calendar MCP app, the record's fields, Code Mode off,
 * the page-host path (start → call → finish), replay of recorded calls, and access rules.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HostCallAnswer } from "@/contracts/engine";
import { titleFromProgram } from "@/server/services/code-runs/runs";
import { CALENDAR_PROGRAM, makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

describe("a chat titled by the first program a person runs in it", () => {
  it("takes the catalog's bindings the program names, in order, never its own text", () => {
    const catalog = ["cal.list", "email.send", "notes.read", "notes.write"];
    expect(
      titleFromProgram(
        "// plan the offsite\nconst a = await apps.cal.list({}); await apps . email . send({}); apps.cal.list({}); apps.secret_plan.x(); apps.notes.read({}); apps.notes.write({})",
        catalog,
      ),
    ).toBe("cal.list, email.send, notes.read, …");
    expect(titleFromProgram("// Count to three\nreturn apps.nothing.here", catalog)).toBeNull();
  });

  it("names nothing a comment or a string names: only bindings in the code itself", () => {
    const catalog = ["cal.list", "email.send"];
    expect(titleFromProgram("// apps.email.send is not called\nreturn 1", catalog)).toBeNull();
    expect(titleFromProgram("/* apps.email.send(\n */ return 1", catalog)).toBeNull();
    expect(titleFromProgram('const s = "apps.email.send"; return s', catalog)).toBeNull();
    expect(titleFromProgram("return 'it\\'s apps.email.send'", catalog)).toBeNull();
    expect(titleFromProgram("return `apps.email.send`", catalog)).toBeNull();
    expect(
      titleFromProgram(
        '// apps.email.send\nconst d = "2026"; return apps.cal.list({ day: "x" }) // apps.email.send',
        catalog,
      ),
    ).toBe("cal.list");
    expect(titleFromProgram('const u = "http://x"; return apps.cal.list({})', catalog)).toBe("cal.list");
  });

  it("titles a new chat once, with nothing of the program's text or reason in clear; a named chat keeps its name", async () => {
    const caller = t.caller(t.admin);
    const fresh = await caller.chats.create({});
    expect(fresh.title).toBe("New chat");
    await caller.codeRuns.runOnServer({ chatId: fresh.id, code: "// Count to three\nreturn 3", reason: "Count" });
    expect((await caller.chats.byId({ id: fresh.id })).title).toBe("New chat");
    const code = `// Private plan\nreturn (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length`;
    await caller.codeRuns.runOnServer({ chatId: fresh.id, code, reason: "Private reason" });
    expect((await caller.chats.byId({ id: fresh.id })).title).toBe("work_calendar.list_events");
    await caller.codeRuns.runOnServer({ chatId: fresh.id, code: 'return apps.notes.read_note({ id: "x" })' });
    expect((await caller.chats.byId({ id: fresh.id })).title).toBe("work_calendar.list_events");
    const named = await caller.chats.create({ title: "Planning" });
    await caller.codeRuns.runOnServer({ chatId: named.id, code });
    expect((await caller.chats.byId({ id: named.id })).title).toBe("Planning");
  });
});

describe("code runs", () => {
  it("runs the calendar program on the server runner and records every call", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Calendar" });
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: CALENDAR_PROGRAM,
      reason: "busy meetings",
    });
    expect(record.status).toBe("Completed");
    expect(record.chat).toBe(chat.id);
    expect(record.session).toBe(chat.id);
    expect(record.code).toBe(CALENDAR_PROGRAM);
    expect(record.reason).toBe("busy meetings");
    expect(record.calls.map((c) => c.binding)).toEqual(["work_calendar.list_events", "work_calendar.list_events"]);
    expect(record.calls.map((c) => c.index)).toEqual([0, 1]);
    expect(record.calls[0]?.source).toMatchObject({ connectionName: "Work calendar", name: "list-events" });
    const events = (
      record.calls[0]!.app!.result as { structuredContent: { events: { title: string; attendees: number }[] } }
    ).structuredContent.events;
    expect(events.length).toBeGreaterThan(0);
    expect(record.result?._tag).toBe("Completed");
    if (record.result?._tag !== "Completed") throw new Error("not completed");
    const titles = record.result.value as string[];
    expect(titles.length).toBeGreaterThan(0);
    const all = record.calls.flatMap(
      (c) =>
        (c.app!.result as { structuredContent: { events: { title: string; attendees: number }[] } }).structuredContent
          .events,
    );
    expect(titles).toEqual(all.filter((e) => e.attendees > 10).map((e) => e.title));
    expect(titles.length).toBeLessThan(all.length);
    expect(record.result.logs).toEqual([{ level: "log", text: `events ${all.length}` }]);
    expect(await caller.codeRuns.byId({ id: record.id })).toEqual(record);
    expect(await caller.codeRuns.listByChat({ chatId: chat.id })).toEqual([record]);
  });

  it("fails with Unavailable while Code Mode is off, and records that", async () => {
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: false } });
    try {
      const chat = await caller.chats.create({ title: "Off" });
      // A refused run does not title a new chat from its program.
      const fresh = await caller.chats.create({});
      const refused = await caller.codeRuns.runOnServer({ chatId: fresh.id, code: CALENDAR_PROGRAM });
      expect(refused.result).toMatchObject({ _tag: "Failed", reason: "Unavailable" });
      expect((await caller.chats.byId({ id: fresh.id })).title).toBe("New chat");
      const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: "return 1" });
      expect(record.status).toBe("Failed");
      expect(record.result).toMatchObject({ _tag: "Failed", reason: "Unavailable" });
      expect((record.result as { errorId: string }).errorId).toMatch(/^err_/);
      const started = await caller.codeRuns.start({ chatId: chat.id, code: "return 1" });
      expect(started.ticket).toBeNull();
      expect(started.record.result).toMatchObject({ reason: "Unavailable" });
    } finally {
      const now = await caller.settings.get();
      await caller.settings.update({ expectedVersion: now.version, codeMode: { enabled: true } });
    }
  });

  it("serves a page host: start gives a ticket, calls are decided and recorded by the server, replays never resend", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: CALENDAR_PROGRAM, reason: "page" });
    expect(ticket).not.toBeNull();
    const { runId, attempt, input } = ticket!;
    expect(input.bindings).toContain("work_calendar.list_events");
    expect(input.limits).toEqual({ timeoutMs: 10000, memoryMb: 64, outputBytes: 65536, maxPendingCalls: 16 });

    const first = (await caller.codeRuns.appCall({
      runId,
      attempt,
      index: 0,
      binding: "work_calendar.list_events",
      argsJson: '{"day":"2026-10-23"}',
    })) as HostCallAnswer;
    expect(first.type).toBe("ok");
    const opsBefore = await t.platform.db.query("select id from app_operations where run_id = $1", [runId]);
    // The same call again (an idempotent re-send) is answered from the record: nothing new is sent.
    const again = await caller.codeRuns.appCall({
      runId,
      attempt,
      index: 0,
      binding: "work_calendar.list_events",
      argsJson: '{ "day": "2026-10-23" }',
    });
    expect(again).toEqual(first);
    expect(await t.platform.db.query("select id from app_operations where run_id = $1", [runId])).toHaveLength(
      opsBefore.length,
    );

    const unknown = (await caller.codeRuns.appCall({
      runId,
      attempt,
      index: 1,
      binding: "nope.nothing",
      argsJson: "{}",
    })) as HostCallAnswer;
    expect(unknown).toMatchObject({ type: "error", name: "AppCallFailed", details: { reason: "unavailable" } });

    const mismatch = await caller.codeRuns.appCall({
      runId,
      attempt,
      index: 0,
      binding: "work_calendar.list_events",
      argsJson: '{"day":"2026-10-25"}',
    });
    expect(mismatch).toMatchObject({ type: "stop", reason: "ReplayMismatch" });
    const record = await caller.codeRuns.byId({ id: runId });
    expect(record.status).toBe("Failed");
    expect(record.result).toMatchObject({ _tag: "Failed", reason: "ReplayMismatch" });
    const late = await caller.codeRuns.appCall({
      runId,
      attempt,
      index: 2,
      binding: "work_calendar.list_events",
      argsJson: "{}",
    });
    expect(late).toMatchObject({ type: "stop" });
  });

  it("stores what the page reports, capping the value at outputBytes", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const ok = (await caller.codeRuns.start({ chatId: chat.id, code: "return 1" })).ticket!;
    const done = await caller.codeRuns.finish({
      runId: ok.runId,
      attempt: ok.attempt,
      outcome: { status: "completed", valueJson: '{"a":1}', logs: [{ level: "warn", text: "w" }], output: [] },
    });
    expect(done.result).toEqual({
      _tag: "Completed",
      value: { a: 1 },
      logs: [{ level: "warn", text: "w" }],
      output: [],
    });
    const big = (await caller.codeRuns.start({ chatId: chat.id, code: "return 1" })).ticket!;
    const tooBig = await caller.codeRuns.finish({
      runId: big.runId,
      attempt: big.attempt,
      outcome: { status: "completed", valueJson: JSON.stringify("x".repeat(70_000)), logs: [], output: [] },
    });
    expect(tooBig.result).toMatchObject({ _tag: "Failed", reason: "OutputTooLarge" });
  });

  it("typescript programs are transpiled; diagnostics fail the run with line and column", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const ok = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      language: "typescript",
      code: "const n: number = 40\nreturn n + 2",
    });
    expect(ok.result).toMatchObject({ _tag: "Completed", value: 42 });
    const bad = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      language: "typescript",
      code: "const n: number = \nreturn (",
    });
    expect(bad.result).toMatchObject({ _tag: "Failed", reason: "Error" });
    expect((bad.result as { message: string }).message).toMatch(/line \d+, column \d+/);
  });

  it("lets only people who may read the chat see its runs; a stranger gets NOT_FOUND", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: "return 'mine'" });
    const stranger = await makePerson(t, "member");
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: TRPCError) => e.code,
      );
    expect(await codeOf(t.caller(stranger).codeRuns.byId({ id: record.id }))).toBe("NOT_FOUND");
    expect(await codeOf(t.caller(stranger).codeRuns.listByChat({ chatId: chat.id }))).toBe("NOT_FOUND");
    expect(await codeOf(t.caller(stranger).codeRuns.runOnServer({ chatId: chat.id, code: "return 1" }))).toBe(
      "NOT_FOUND",
    );
    const noApps = await makePerson(t, "member", ["sessions.read", "sessions.write"]);
    expect(await codeOf(t.caller(noApps).codeRuns.byId({ id: record.id }))).toBe("FORBIDDEN");
    expect(await codeOf(t.caller(null).codeRuns.byId({ id: record.id }))).toBe("UNAUTHORIZED");
    const bad = await t
      .caller(t.admin)
      .codeRuns.runOnServer({ chatId: chat.id, code: "" })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("code");
  });
});
