/**
 * Takeover after a host instance died: a server-hosted run whose instance's lease ended is continued
 * by the sweep through replay; a read that was in flight (sent, never recorded) is sent again. (A write
 * in flight stays Unknown and is never sent twice: decisions.test.ts.)
 */
import { afterAll, describe, expect, it } from "vitest";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { startTestPlatform } from "../helpers/platform";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** The page made call 0 and the App answered, but its host "died" before the outcome was recorded. */
async function lostCall(code: string, binding: string, argsJson: string) {
  const t = await startTestPlatform();
  cleanup.push(() => t.close());
  const caller = t.caller(t.admin);
  const s = await caller.settings.get();
  await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
  const chat = await caller.chats.create({});
  const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code });
  const runId = ticket!.runId;
  await caller.codeRuns.appCall({ runId, attempt: 1, index: 0, binding, argsJson });
  const { db } = t.platform;
  await db.query("update code_run_calls set outcome_enc = null, completed_seq = null where run_id = $1", [runId]);
  await db.query("update app_operations set status = 'Running', result_enc = null where run_id = $1", [runId]);
  await db.query("update code_runs set host = 'server', host_instance = 'inst_gone' where id = $1", [runId]);
  return { t, caller, runId };
}

describe("takeover of a dead instance's run", () => {
  it("a read in flight is sent again and the run completes", async () => {
    const { t, caller, runId } = await lostCall(
      "const r = await apps.notes.list_notes({}); return Array.isArray(r.structuredContent.notes)",
      "notes.list_notes",
      "{}",
    );
    const swept = await sweepRuns(t.platform);
    expect(swept.resumed).toContain(runId);
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: runId });
    expect(done.result).toMatchObject({ _tag: "Completed", value: true });
    const ops = await t.platform.db.query<{ status: string }>(
      "select status from app_operations where run_id = $1 order by started_at",
      [runId],
    );
    expect(ops.map((o) => o.status)).toEqual(["Unknown", "Completed"]);
  });

  it("a run whose host instance is alive is left alone", async () => {
    const { t, runId } = await lostCall("return await apps.notes.list_notes({})", "notes.list_notes", "{}");
    await t.platform.db.query("update code_runs set host_instance = $2 where id = $1", [runId, t.platform.instanceId]);
    expect((await sweepRuns(t.platform)).resumed).not.toContain(runId);
  });

  it("a run on an instance that shuts down is handed over (left Running for a takeover), not cancelled", async () => {
    const t = await startTestPlatform();
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true, timeoutMs: 60_000 } });
    const chat = await caller.chats.create({});
    const pending = caller.codeRuns.runOnServer({ chatId: chat.id, code: "while (true) {}" });
    for (let i = 0; i < 600 && t.platform.activeRuns.size === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(t.platform.activeRuns.size).toBe(1);
    const closed = t.close();
    const record = await pending;
    await closed;
    expect(record.status).toBe("Running");
  });
});
