/**
 * `POST /v1/chats/:id/code-runs` (runOnServerOnce) after a storage error: once the run exists, the answer
 * names it (its record, or a 503 with its id and state), never a bare error a client would retry into a
 * second run. The storage error is a real failing statement of the platform's database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/server/db/client";
import { toPublicError } from "@/server/http/public-error";
import { runOnServerOnce } from "@/server/services/idempotency";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

/** Makes the statements `failing` picks throw like a lost database, until the returned function is called. */
function breakStatements(db: Db, failing: (sql: string) => boolean): () => void {
  const query = db.query;
  db.query = ((sql: string, params?: unknown[]) =>
    failing(sql) ? Promise.reject(new Error("connection terminated unexpectedly")) : query(sql, params)) as Db["query"];
  return () => {
    db.query = query;
  };
}

const CODE =
  'const r = await apps.work_calendar.list_events({ day: "2026-10-23" }); return r.structuredContent.events.length';
const finishing = (sql: string) => sql.includes("update code_runs set status = 'Completed'");

async function outcome(promise: Promise<unknown>): Promise<{ value?: unknown; error?: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

describe("a storage error after a run started", () => {
  for (const key of [null, "retry-key-1"]) {
    it(`answers with the run's record (${key ? "with" : "without"} an Idempotency-Key)`, async () => {
      const ctx = { platform: t.platform, principal: t.admin };
      const chat = await t.caller(t.admin).chats.create({ title: "Storage error" });
      const heal = breakStatements(t.platform.db, finishing);
      const answer = await outcome(runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, key)).finally(heal);
      expect(answer.error).toBeUndefined();
      const record = answer.value as { id: string; status: string; chat: string };
      expect(record.id).toMatch(/\S/);
      expect(record.chat).toBe(chat.id);
      expect(record.status).toBe("Running");
      const runs = await t.caller(t.admin).codeRuns.listByChat({ chatId: chat.id });
      expect(runs.map((r) => r.id)).toEqual([record.id]);
      if (key) {
        const again = await runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, key);
        expect(again.id).toBe(record.id);
      }
    });
  }

  it("answers 503 with the run's id and state when its record cannot be read either", async () => {
    const ctx = { platform: t.platform, principal: t.admin };
    const chat = await t.caller(t.admin).chats.create({ title: "Storage gone" });
    let broken = false;
    const heal = breakStatements(t.platform.db, (sql) => {
      if (finishing(sql)) broken = true;
      return broken && /code_runs|code_run_calls/.test(sql);
    });
    const answer = await outcome(runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, null)).finally(heal);
    const pub = toPublicError(answer.error, "test");
    expect(pub.code).toBe("UNAVAILABLE");
    const details = (pub as { details?: { runId?: string; status?: string } }).details;
    expect(details?.status).toBe("Running");
    const runs = await t.caller(t.admin).codeRuns.listByChat({ chatId: chat.id });
    expect(runs.map((r) => r.id)).toEqual([details?.runId]);
    expect(pub.message).toContain(details!.runId!);
  });

  it("answers 503 saying no run was made when the database fails before the run exists (a retry is safe)", async () => {
    const ctx = { platform: t.platform, principal: t.admin };
    const chat = await t.caller(t.admin).chats.create({ title: "No run" });
    const heal = breakStatements(t.platform.db, (sql) => sql.includes("insert into code_runs"));
    const answer = await outcome(runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, null)).finally(heal);
    const pub = toPublicError(answer.error, "test");
    expect(pub.code).toBe("UNAVAILABLE");
    expect(pub.message).toContain("no run was made");
    expect(await t.caller(t.admin).codeRuns.listByChat({ chatId: chat.id })).toEqual([]);
  });

  it("names the run when the database fails right after its row was made (before it was handed to the runner)", async () => {
    const ctx = { platform: t.platform, principal: t.admin };
    const chat = await t.caller(t.admin).chats.create({ title: "Row made" });
    const heal = breakStatements(t.platform.db, (sql) => sql.startsWith("update chats set updated_at"));
    const answer = await outcome(runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, null)).finally(heal);
    const runs = await t.caller(t.admin).codeRuns.listByChat({ chatId: chat.id });
    expect(runs).toHaveLength(1);
    const named = answer.error
      ? (toPublicError(answer.error, "test") as { details?: { runId?: string } }).details?.runId
      : (answer.value as { id: string }).id;
    expect(named).toBe(runs[0]!.id);
  });
});
