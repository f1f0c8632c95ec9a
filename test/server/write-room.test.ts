/**
 * Room for the journal's writes (migration 0023): a call's record with its sealed answer stays in its
 * table's page instead of going out of line (TOAST), and code_runs keeps free room on its pages for the
 * completion counter's updates. Real platform, real Work calendar answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

describe("room for the journal's writes", () => {
  it("keeps a call's record with its ~2.4 KB sealed answer in the row, not in TOAST chunks", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const run = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `const a = []; for (let i = 0; i < 3; i++) a.push(await apps.work_calendar.list_events({ day: "2026-10-23" })); return a.length`,
    });
    expect(run.status).toBe("Completed");
    const rows = await t.platform.db.query<{ len: number; chunk: number | null }>(
      `select length(outcome_enc) as len, pg_column_toast_chunk_id(outcome_enc)::text as chunk
       from code_run_calls where run_id = $1 order by idx`,
      [run.id],
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      // Over Postgres's 2 KB threshold, where the value used to be moved out of line.
      expect(row.len).toBeGreaterThan(2100);
      expect(row.chunk).toBeNull();
    }
  });

  it("leaves code_runs' pages room for heap-only updates", async () => {
    const [row] = await t.platform.db.query<{ reloptions: string[] | null }>(
      "select reloptions from pg_class where relname = 'code_runs'",
    );
    expect(row?.reloptions).toContain("fillfactor=60");
  });
});
