/**
 * How a completed attempt is stored: one statement stores the completion order, completes the run (only
 * if it is still Running at that attempt), withdraws its pending decisions and reads whether a task of the
 * run is still out at an App. The check its calls made stands for the host's right to finish it, so the
 * run and its chat are not read again; anything unusual (the run ended meanwhile, another attempt took
 * it) is answered by reading the run again, as before.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  makePerson,
  pageRunWithOneCall,
  startTestPlatform,
  statementsSent,
  type TestPlatform,
} from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

/** The statements `fn` sends (and what it leaves to settle), as their texts with whitespace folded. */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const sent = await statementsSent(t.platform.db, async () => {
    await fn();
    await t.platform.settled();
  });
  return sent.map(({ sql }) => sql.replace(/\s+/g, " ").trim());
}

const settledEvents = (runId: string) => {
  const seen: unknown[] = [];
  const listener = (e: { runId: string }) => {
    if (e.runId === runId) seen.push(e);
  };
  t.platform.events.on("run-settled", listener);
  return { seen, stop: () => t.platform.events.off("run-settled", listener) };
};

describe("a completed attempt", () => {
  it("on the server: the end reads neither the run nor its chat again, and looks for no task when none is out", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Finish" });
    const code = `return (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length`;
    // Warm: the first run loads the App's tools, the sandbox and the vault's digest.
    await caller.codeRuns.runOnServer({ chatId: chat.id, code });
    let record: Awaited<ReturnType<typeof caller.codeRuns.runOnServer>> | undefined;
    const sent = await statementsOf(async () => {
      record = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
    });
    expect(record?.status).toBe("Completed");
    expect(record?.calls).toHaveLength(1);
    const count = (pattern: RegExp) => sent.filter((s) => pattern.test(s)).length;
    // The start reads the chat once (the caller's right to run programs there); nothing reads it again.
    expect(count(/^select \* from chats where id = \$1$/)).toBe(1);
    // The run is written, then read back only for the record the caller gets (none reads it by id).
    expect(count(/^select \* from code_runs where id = \$1$/)).toBe(0);
    expect(count(/^with n as \(select count\(\*\) as n from code_run_calls/)).toBe(1);
    expect(count(/status in \('Task', 'InputRequired'\) and task_enc is not null/)).toBe(1);
    expect(count(/^select id from app_operations/)).toBe(0);
    // Start to finish: the settings, the chat, the vault's names, the run's row, the App's read, the
    // call's record, the completion and the record read back.
    expect(sent.length, sent.join("\n")).toBeLessThanOrEqual(8);
  });

  it("a page's finish after another attempt took the run is refused (409) and completes nothing", async () => {
    const member = await makePerson(t, "member");
    const caller = t.caller(member);
    const { runId, attempt } = await pageRunWithOneCall(caller, "Taken over");
    // Another instance took the run over (its lease had ended) and runs attempt 2.
    await t.platform.db.query("update code_runs set attempt = attempt + 1 where id = $1", [runId]);
    const events = settledEvents(runId);
    const refused = await caller.codeRuns
      .finish({ runId, attempt, outcome: { status: "completed", valueJson: "1", logs: [], output: [] } })
      .catch((e: unknown) => e as TRPCError);
    events.stop();
    expect((refused as TRPCError).code).toBe("CONFLICT");
    const record = await caller.codeRuns.byId({ id: runId });
    expect(record.status).toBe("Running");
    expect(record.result).toBeNull();
    expect(events.seen).toEqual([]);
  });

  it("a finish that crosses a cancel keeps the cancel and reports the run's end once", async () => {
    const caller = t.caller(t.admin);
    const { runId, attempt } = await pageRunWithOneCall(caller, "Crossed");
    const events = settledEvents(runId);
    await caller.codeRuns.cancel({ id: runId });
    const after = await caller.codeRuns.finish({
      runId,
      attempt,
      outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder: [0] },
    });
    await t.platform.settled();
    events.stop();
    expect(after.status).toBe("Cancelled");
    expect(after.result).toMatchObject({ _tag: "Failed", reason: "Cancelled" });
    expect(events.seen).toHaveLength(1);
  });

  it("a task still out at its App when the run completes is cancelled there", async () => {
    const caller = t.caller(t.admin);
    const { runId, attempt } = await pageRunWithOneCall(caller, "Task out");
    // As if the call had become a task at its App (tasks.test.ts drives a real one).
    const [op] = await t.platform.db.query<{ id: string }>(
      "select id from app_operations where run_id = $1 and call_index = 0",
      [runId],
    );
    const task = { taskId: "task-1", status: "working", statusMessage: null };
    await t.platform.db.query("update app_operations set status = 'Task', task_enc = $2 where id = $1", [
      op!.id,
      t.platform.seal(`app_operations:${op!.id}:task`, JSON.stringify(task)),
    ]);
    const events = settledEvents(runId);
    const sent = await statementsOf(() =>
      caller.codeRuns.finish({
        runId,
        attempt,
        outcome: { status: "completed", valueJson: "1", logs: [], output: [] },
      }),
    );
    events.stop();
    expect(events.seen).toEqual([{ runId, turnId: null }]);
    // The run-settled subscriber looked for the run's tasks to cancel them.
    expect(sent.filter((s) => s.startsWith("select id from app_operations where run_id = $1")).length).toBe(1);
  });
});

describe("a program that returns while a call it did not await is being recorded", () => {
  it("ends after the call's decision is asked, and withdraws it: no decision stays pending on an ended run", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Not awaited" });
    const db = t.platform.db;
    const original = db.query.bind(db);
    // The decision is asked slowly: the program has long returned by then.
    db.query = (async (sql: string, params?: unknown[]) => {
      if (sql.startsWith("insert into decisions")) await new Promise((resolve) => setTimeout(resolve, 300));
      return original(sql, params);
    }) as typeof db.query;
    let record: Awaited<ReturnType<typeof caller.codeRuns.runOnServer>>;
    try {
      record = await caller.codeRuns.runOnServer({
        chatId: chat.id,
        code: `const pending = apps.email.send_email({ to: "slow@example.com", subject: "s", body: "x" })
pending.catch(() => {})
return "returned"`,
      });
      await t.platform.settled();
    } finally {
      db.query = original;
    }
    expect(record.status).toBe("Completed");
    expect(record.calls[0]).toMatchObject({
      binding: "email.send_email",
      rejection: { name: "Withdrawn", message: expect.stringContaining("not sent") },
    });
    const decisions = await caller.decisions.list({ runId: record.id });
    expect(decisions.map((d) => d.status)).toEqual(["withdrawn"]);
  });

  it("a run stopped while it ran keeps the lines it logged until it stopped (server runner)", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Cancel keeps logs" });
    const ran = caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `console.log("step 1 reached")
await apps.work_calendar.list_events({ day: "2026-10-23" })
console.log("step 2 reached")
while (true) {}`,
    });
    const runId = await vi.waitFor(async () => {
      const rows = await t.platform.db.query<{ id: string; status: string }>(
        "select c.id, c.status from code_runs c join code_run_calls k on k.run_id = c.id where c.chat_id = $1",
        [chat.id],
      );
      expect(rows[0]?.status).toBe("Running");
      return rows[0]!.id;
    });
    await caller.codeRuns.cancel({ id: runId });
    await ran;
    await vi.waitFor(async () => {
      const record = await caller.codeRuns.byId({ id: runId });
      expect(record.status).toBe("Cancelled");
      expect(record.result).toMatchObject({ _tag: "Failed", reason: "Cancelled", message: "The program was stopped." });
      expect((record.result as { logs: { text: string }[] }).logs.map((l) => l.text)).toEqual([
        "step 1 reached",
        "step 2 reached",
      ]);
    });
  });

  it("a page's report after a cancel adds its log once, and only for the attempt that was cancelled", async () => {
    const caller = t.caller(t.admin);
    const { runId, attempt } = await pageRunWithOneCall(caller, "Cancelled page run");
    await caller.codeRuns.cancel({ id: runId });
    const logs = [{ level: "log" as const, text: "where it got stuck" }];
    const after = await caller.codeRuns.finish({
      runId,
      attempt,
      outcome: { status: "failed", reason: "Cancelled", message: "stopped", logs, output: [] },
    });
    expect(after.status).toBe("Cancelled");
    expect(after.result).toMatchObject({ _tag: "Failed", reason: "Cancelled", logs });
    // A second report does not replace it.
    const again = await caller.codeRuns.finish({
      runId,
      attempt,
      outcome: {
        status: "failed",
        reason: "Cancelled",
        message: "stopped",
        logs: [{ level: "log", text: "x" }],
        output: [],
      },
    });
    expect(again.result).toMatchObject({ logs });
  });
});
