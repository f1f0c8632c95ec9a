/**
 * The database work of a run's own start and finish (shared by all its calls), counted: a server run of
 * one call, everything it caused included (jobs, events), until the platform is settled. The start writes
 * the run and touches its chat in one statement and builds the first ticket from what it wrote (no
 * re-read, no replay log for a new run, the settings read once); an API run has no turn, so its end
 * enqueues no late-result job.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

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
    const statements: string[] = [];
    const db = t.platform.db;
    const touched = async () =>
      Number(
        (await db.query<{ updated_at: string }>("select updated_at from chats where id = $1", [chat.id]))[0]!
          .updated_at,
      );
    const before = await touched();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      statements.push(sql.replace(/\s+/g, " ").slice(0, 80));
      return query(sql, params);
    }) as typeof db.query;
    try {
      const run = await caller.codeRuns.runOnServer({ chatId: chat.id, code: oneCall });
      await t.platform.settled();
      expect(run.status).toBe("Completed");
      expect(run.calls).toHaveLength(1);
      // The record reads each call with its App operation in one statement.
      expect(run.calls[0]!.app).toMatchObject({
        status: "Completed",
        result: {
          structuredContent: { events: expect.arrayContaining([expect.objectContaining({ id: "evt_seed_01" })]) },
        },
      });
    } finally {
      db.query = query;
    }
    expect(statements.filter((s) => s.startsWith("insert into jobs"))).toEqual([]);
    expect(
      statements.filter((s) => s.startsWith("select version, data, updated_at from platform_settings")),
    ).toHaveLength(1);
    // 16 now, 4 of them the call itself; 40 before (settings read twice, the new run read back with an
    // empty replay log and a record nobody used, a late-result job for a run without a turn, the record's
    // operations and decisions read apart, its run and chat read again after the host's check, the calls
    // counted, and decisions withdrawn, apart). A heartbeat (3) and the job poll may fall in.
    expect(statements.length).toBeLessThanOrEqual(21);
    expect(await db.query("select 1 from jobs where kind = 'report-late'")).toHaveLength(0);
    // The chat is still touched by the run's start (its list order).
    expect(await touched()).toBeGreaterThan(before);
  });
});
