/**
 * The sweep runs every 5 s for as long as the server lives, so what it reads must not grow with every run
 * and App operation ever made: each of its statements finds the runs and operations still going through
 * an index (migration 0027-live-indexes). Sequential scans are turned off for the check, so a statement
 * that has no index to use still shows one in its plan (a small test table would invite one anyway).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { startTestPlatform, statementsSent, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

describe("the sweep", () => {
  it("reads runs and App operations through indexes, never a whole table", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Sweep" });
    await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `return (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length`,
    });
    const sent = await statementsSent(t.platform.db, () => sweepRuns(t.platform));
    const scanned = sent.filter((s) => /\b(code_runs|app_operations)\b/.test(s.sql));
    expect(scanned.length).toBeGreaterThanOrEqual(6);
    for (const { sql, params } of scanned) {
      const plan = await t.platform.db.transaction(async (tx) => {
        await tx.query("set local enable_seqscan = off");
        const rows = await tx.query<{ "QUERY PLAN": string }>(`explain (costs off) ${sql}`, params);
        return rows.map((r) => r["QUERY PLAN"]).join("\n");
      });
      expect(plan, sql).not.toMatch(/Seq Scan on (code_runs|app_operations)/);
    }
  });
});
