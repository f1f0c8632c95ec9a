/**
 * The database work of a run's own start and finish (shared by all its calls), counted: a server run of
 * one call, everything it caused included (jobs, events), until the platform is settled. The start writes
 * the run and touches its chat in one statement and builds the first ticket from what it wrote (no
 * re-read, no replay log for a new run, the settings read once); an API run has no turn, so its end
 * enqueues no late-result job. Its first call reads neither the run nor its chat again (the start's check is
 * its host check); a run that waits for a slot is written Queued, not Running and then Queued.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestPlatform, statementsSent, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const oneCall = `return (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length`;

describe("database work of a run's start and finish", () => {
  it("a one-call server run stays within its statement budget and leaves no job behind", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Run counts" });
    // Warm: the first run loads the App's tools and the sandbox.
    await caller.codeRuns.runOnServer({ chatId: chat.id, code: oneCall });
    await t.platform.settled();
    const db = t.platform.db;
    const touched = async () =>
      Number(
        (await db.query<{ updated_at: string }>("select updated_at from chats where id = $1", [chat.id]))[0]!
          .updated_at,
      );
    const before = await touched();
    await new Promise((resolve) => setTimeout(resolve, 5));
    let run: Awaited<ReturnType<typeof caller.codeRuns.runOnServer>> | undefined;
    const statements = (
      await statementsSent(db, async () => {
        run = await caller.codeRuns.runOnServer({ chatId: chat.id, code: oneCall });
        await t.platform.settled();
      })
    ).map(({ sql }) => sql.replace(/\s+/g, " ").slice(0, 80));
    expect(run?.status).toBe("Completed");
    expect(run?.calls).toHaveLength(1);
    // The record reads each call with its App operation in one statement.
    expect(run?.calls[0]?.app).toMatchObject({
      status: "Completed",
      result: {
        structuredContent: { events: expect.arrayContaining([expect.objectContaining({ id: "evt_seed_01" })]) },
      },
    });
    expect(statements.filter((s) => s.startsWith("insert into jobs"))).toEqual([]);
    expect(
      statements.filter((s) => s.startsWith("select version, data, updated_at from platform_settings")),
    ).toHaveLength(1);
    // 16 now, 4 of them the call itself; 40 before (settings read twice, the new run read back with an
    // empty replay log and a record nobody used, a late-result job for a run without a turn, the record's
    // operations and decisions read apart, its run and chat read again after the host's check, the calls
    // counted, and decisions withdrawn, apart). The platform's timers' statements are not counted.
    expect(statements.length, statements.join("\n")).toBeLessThanOrEqual(16);
    expect(await db.query("select 1 from jobs where kind = 'report-late'")).toHaveLength(0);
    // The chat is still touched by the run's start (its list order).
    expect(await touched()).toBeGreaterThan(before);
  });
});

describe("a run's start seeds its first call and a run that must wait is written Queued", () => {
  it("no Running → Queued update, Queued while it waits, cancel while queued, and no re-read of the run or its chat at the first call", async () => {
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    const { version } = await caller.settings.update({
      expectedVersion: s.version,
      codeMode: { maxServerRuns: 1, maxServerRunsPerUser: 1 },
    });
    const apps = t.platform.apps as unknown as { call: (...args: unknown[]) => Promise<unknown> };
    const real = apps.call;
    // The first run holds the only slot: its call waits at the App's door until released.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    apps.call = async (...args: unknown[]) => {
      if ((args[0] as { binding: string }).binding === "notes.list_notes") {
        arrived();
        await held;
      }
      return real.apply(t.platform.apps, args);
    };
    const db = t.platform.db;
    const query = db.query.bind(db);
    const statements: { sql: string; first: unknown }[] = [];
    let recording = true;
    db.query = ((sql: string, params?: unknown[]) => {
      if (recording) statements.push({ sql: sql.replace(/\s+/g, " "), first: params?.[0] });
      return query(sql, params);
    }) as typeof db.query;
    const [first, waiting, cancelling] = await Promise.all(
      ["holds the slot", "waits", "is cancelled"].map((title) => caller.chats.create({ title })),
    );
    let records: Awaited<ReturnType<typeof caller.codeRuns.runOnServer>>[];
    try {
      const holder = caller.codeRuns.runOnServer({
        chatId: first!.id,
        code: "return (await apps.notes.list_notes({})).structuredContent.notes.length",
      });
      await holding;
      const queued = caller.codeRuns.runOnServer({ chatId: waiting!.id, code: oneCall });
      const cancelled = caller.codeRuns.runOnServer({ chatId: cancelling!.id, code: oneCall });
      const statusIn = async (chatId: string) =>
        (await query<{ status: string }>("select status from code_runs where chat_id = $1", [chatId]))[0]?.status;
      await vi.waitFor(async () => {
        expect([await statusIn(waiting!.id), await statusIn(cancelling!.id)]).toEqual(["Queued", "Queued"]);
      });
      // Nothing of these runs moves while they wait: what the API shows is not counted.
      recording = false;
      const [shown] = await caller.codeRuns.listByChat({ chatId: waiting!.id });
      expect(shown?.status).toBe("Queued");
      const [toCancel] = await caller.codeRuns.listByChat({ chatId: cancelling!.id });
      expect((await caller.codeRuns.cancel({ id: toCancel!.id })).status).toBe("Cancelled");
      recording = true;
      release();
      records = await Promise.all([holder, queued, cancelled]);
      await t.platform.settled();
    } finally {
      release();
      apps.call = real;
      db.query = query;
      await caller.settings.update({
        expectedVersion: version,
        codeMode: { maxServerRuns: 4, maxServerRunsPerUser: 2 },
      });
    }
    const [holderRun, queuedRun, cancelledRun] = records;
    expect(holderRun!.status).toBe("Completed");
    expect(queuedRun!.status).toBe("Completed");
    expect(queuedRun!.calls).toHaveLength(1);
    expect(cancelledRun!.status).toBe("Cancelled");
    expect(cancelledRun!.calls).toHaveLength(0);
    expect(statements.filter((x) => x.sql.startsWith("update code_runs set status = 'Queued'"))).toEqual([]);
    expect(statements.filter((x) => x.sql.startsWith("update code_runs set status = 'Running'"))).toHaveLength(1);
    // Each completed run reads its chat once, at its start, and never its row: its first call takes both
    // from the start (immediate for the first run, admitted from the queue for the second), and its end
    // from its calls' check (run-finish.test.ts).
    const reads = (table: string, id: string) =>
      statements.filter((x) => x.sql === `select * from ${table} where id = $1` && x.first === id).length;
    expect([reads("chats", first!.id), reads("code_runs", holderRun!.id)]).toEqual([1, 0]);
    expect([reads("chats", waiting!.id), reads("code_runs", queuedRun!.id)]).toEqual([1, 0]);
  });
});
