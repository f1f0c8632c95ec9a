/**
 * Limits a client cannot get around (issue 10, findings 8 and 9): what a page reports at the end of a run
 * is bounded by what the run can have and stored in one statement; server-side runs are admitted under
 * a total and a per-person cap, the rest queue (visible as Queued) up to a per-person bound, beyond
 * which a run is refused. Real platform, real MCP apps, real worker-thread runner.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { CodeRunRecord } from "@/contracts/code-run";
import { RunAdmission, type RunPass, type RunRefusal } from "@/server/run-admission";
import type { Principal } from "@/server/services/auth";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
let member: Principal;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  member = await makePerson(t, "member");
});
afterAll(() => t?.close());

const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: TRPCError) => e,
  );

/** A page run that made `calls` real calls to the Work calendar. */
async function pageRunWithCalls(calls: number) {
  const caller = t.caller(member);
  const chat = await caller.chats.create({ title: "bounds" });
  const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: "return 1" });
  const { runId, attempt } = ticket!;
  for (let index = 0; index < calls; index++) {
    const answer = await caller.codeRuns.appCall({
      runId,
      attempt,
      index,
      binding: "work_calendar.list_events",
      argsJson: '{"day":"2026-10-23"}',
    });
    expect(answer).toMatchObject({ type: "ok" });
  }
  return { caller, runId, attempt };
}

describe("what a page reports at the end of a run", () => {
  it("refuses a completion order longer than the run's calls, naming the field, and stores nothing", async () => {
    const { caller, runId, attempt } = await pageRunWithCalls(2);
    const completionOrder = Array.from({ length: 100_000 }, (_, i) => i % 2);
    const error = await errorOf(
      caller.codeRuns.finish({
        runId,
        attempt,
        outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder },
      }),
    );
    expect(error?.code).toBe("BAD_REQUEST");
    expect(error?.message).toContain("outcome.completionOrder");
    expect(error?.message).toContain("2 calls");
    expect((await caller.codeRuns.byId({ id: runId })).status).toBe("Running");
  });

  it("refuses lists beyond the static bounds in the schema", async () => {
    const { caller, runId, attempt } = await pageRunWithCalls(0);
    const tooLong = Array.from({ length: 100_001 }, () => 0);
    const error = await errorOf(
      caller.codeRuns.finish({
        runId,
        attempt,
        outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder: tooLong },
      }),
    );
    expect(error?.code).toBe("BAD_REQUEST");
    expect(error?.message).toContain("completionOrder");
  });

  it("refuses logs and output beyond the run's outputBytes (empty lines count too)", async () => {
    const { caller, runId, attempt } = await pageRunWithCalls(0);
    const finish = (logs: { level: "log"; text: string }[], output: { type: "text"; text: string }[]) =>
      errorOf(
        caller.codeRuns.finish({ runId, attempt, outcome: { status: "completed", valueJson: "1", logs, output } }),
      );
    const emptyLines = await finish(
      Array.from({ length: 70_000 }, () => ({ level: "log" as const, text: "" })),
      [],
    );
    expect(emptyLines?.code).toBe("BAD_REQUEST");
    expect(emptyLines?.message).toContain("outcome.logs");
    const bigLogs = await finish(
      [
        { level: "log", text: "x".repeat(40_000) },
        { level: "log", text: "y".repeat(40_000) },
      ],
      [],
    );
    expect(bigLogs?.message).toContain("outcome.logs");
    const bigOutput = await finish([], [{ type: "text", text: "z".repeat(65_537) }]);
    expect(bigOutput?.message).toContain("outcome.output");
    const fine = await caller.codeRuns.finish({
      runId,
      attempt,
      outcome: { status: "completed", valueJson: "1", logs: [{ level: "log", text: "" }], output: [] },
    });
    expect(fine.status).toBe("Completed");
  });

  it("bounds the ids and the arguments a page sends", async () => {
    const caller = t.caller(member);
    const long = "x".repeat(10_000);
    for (const p of [
      caller.codeRuns.byId({ id: long }),
      caller.codeRuns.listByChat({ chatId: long }),
      caller.turns.byId({ turnId: long }),
    ]) {
      const error = await errorOf(p);
      expect(error?.code).toBe("BAD_REQUEST");
      expect(error?.message).toContain("is too long");
    }
    const { runId, attempt } = await pageRunWithCalls(0);
    const huge = await errorOf(
      caller.codeRuns.appCall({
        runId,
        attempt,
        index: 0,
        binding: "work_calendar.list_events",
        argsJson: " ".repeat(8 * 1024 * 1024 + 1),
      }),
    );
    expect(huge?.code).toBe("BAD_REQUEST");
    expect(huge?.message).toContain("argsJson must be at most");
  });

  it("stores the completion order in one statement, whatever its length", async () => {
    const { caller, runId, attempt } = await pageRunWithCalls(30);
    const order = Array.from({ length: 30 }, (_, i) => 29 - i);
    const db = t.platform.db;
    const original = db.query.bind(db);
    let queries = 0;
    db.query = ((sql: string, params?: unknown[]) => {
      queries += 1;
      return original(sql, params);
    }) as typeof db.query;
    try {
      await caller.codeRuns.finish({
        runId,
        attempt,
        outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder: order },
      });
    } finally {
      db.query = original;
    }
    // A constant number of statements (reading the record back takes several), never one per entry.
    expect(queries).toBeLessThan(order.length);
    const rows = await db.query<{ idx: number; completed_seq: number }>(
      "select idx, completed_seq from code_run_calls where run_id = $1 order by completed_seq",
      [runId],
    );
    expect(rows.map((r) => r.idx)).toEqual(order);
  });

  it("writes only the calls whose place in the completion order moved", async () => {
    const { caller, runId, attempt } = await pageRunWithCalls(4);
    const versions = async () =>
      t.platform.db.query<{ idx: number; completed_seq: number; xmin: string }>(
        "select idx, completed_seq, xmin::text as xmin from code_run_calls where run_id = $1 order by idx",
        [runId],
      );
    const before = await versions();
    expect(before.map((r) => r.completed_seq)).toEqual([1, 2, 3, 4]);
    await caller.codeRuns.finish({
      runId,
      attempt,
      outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder: [0, 1, 3, 2] },
    });
    const after = await versions();
    expect(after.map((r) => r.completed_seq)).toEqual([1, 2, 4, 3]);
    // The first two kept their row version (no update at all); the two that swapped places were written.
    expect(after.map((r, i) => r.xmin === before[i]!.xmin)).toEqual([true, true, false, false]);
  });
});

describe("one call's arguments", () => {
  it("are bounded below the request body limit: a client posting a huge call gets invalid_arguments, a program is stopped by the engine first", async () => {
    const big = JSON.stringify({ day: "2026-10-23", pad: "x".repeat(3.5 * 1024 * 1024) });
    const { caller, runId, attempt } = await pageRunWithCalls(0);
    const answer = await caller.codeRuns.appCall({
      runId,
      attempt,
      index: 0,
      binding: "work_calendar.list_events",
      argsJson: big,
    });
    expect(answer).toMatchObject({ type: "error", name: "AppCallFailed", details: { reason: "invalid_arguments" } });
    expect(JSON.stringify(answer)).toContain(`larger than ${3 * 1024 * 1024} bytes`);

    const chat = await t.caller(member).chats.create({ title: "big args" });
    const record = await t.caller(member).codeRuns.runOnServer({
      chatId: chat.id,
      code: 'try { await apps.work_calendar.list_events({ day: "2026-10-23", pad: "x".repeat(3.5 * 1024 * 1024) }) } catch (e) { return [e.name, e.details?.reason, e.message] }',
    });
    expect(record.result).toMatchObject({
      _tag: "Completed",
      value: ["RangeError", null, expect.stringContaining("limit 1048576")],
    });
  });
});

describe("admission of server-side runs (the real module)", () => {
  const limits = { maxServerRuns: 4, maxServerRunsPerUser: 2, maxQueuedRunsPerUser: 2 };

  it("admits up to the per-person cap, queues the rest in order, and lets others use free total slots", async () => {
    const admission = new RunAdmission(limits);
    const a1 = pass(admission.request("a", limits, { bounded: true }));
    const a2 = pass(admission.request("a", limits, { bounded: true }));
    const a3 = pass(admission.request("a", limits, { bounded: true }));
    expect([a1.immediate, a2.immediate, a3.immediate]).toEqual([true, true, false]);
    const b1 = pass(admission.request("b", limits, { bounded: true }));
    const b2 = pass(admission.request("b", limits, { bounded: true }));
    expect([b1.immediate, b2.immediate]).toEqual([true, true]);
    const c1 = pass(admission.request("c", limits, { bounded: true }));
    expect(c1.immediate).toBe(false);
    expect(admission.counts()).toEqual({ running: 4, queued: 2 });
    a1.release();
    expect(await a3.admitted).toBe(true);
    expect(admission.counts()).toEqual({ running: 4, queued: 1 });
    b1.release();
    expect(await c1.admitted).toBe(true);
    for (const p of [a2, a3, b2, c1]) p.release();
    expect(admission.counts()).toEqual({ running: 0, queued: 0 });
  });

  it("refuses a person's request beyond their queue bound (as data); background work still queues", async () => {
    const admission = new RunAdmission(limits);
    const held = [1, 2, 3, 4].map(() => pass(admission.request("a", limits, { bounded: true })));
    expect(held.map((p) => p.immediate)).toEqual([true, true, false, false]);
    const refusal = admission.request("a", limits, { bounded: true });
    expect(refusal).toMatchObject({ refused: true, details: { running: 2, queued: 2, maxQueuedRunsPerUser: 2 } });
    expect((refusal as { message: string }).message).toContain("limit 2");
    const background = pass(admission.request("a", limits, { bounded: false }));
    expect(background.immediate).toBe(false);
    background.release();
    expect(await background.admitted).toBe(false);
    for (const p of held) p.release();
    expect(admission.counts()).toEqual({ running: 0, queued: 0 });
  });

  it("raised caps admit queued runs at once; lowered caps hold the queue and leave running ones be", async () => {
    const one = { maxServerRuns: 1, maxServerRunsPerUser: 1, maxQueuedRunsPerUser: 4 };
    const admission = new RunAdmission(one);
    const held = [1, 2, 3].map(() => pass(admission.request("a", one, { bounded: true })));
    expect(held.map((p) => p.immediate)).toEqual([true, false, false]);
    admission.apply({ ...one, maxServerRuns: 4, maxServerRunsPerUser: 4 });
    expect(admission.counts()).toEqual({ running: 3, queued: 0 });
    expect(await Promise.all(held.map((p) => p.admitted))).toEqual([true, true, true]);
    const later = pass(
      admission.request("a", { ...one, maxServerRuns: 4, maxServerRunsPerUser: 4 }, { bounded: true }),
    );
    expect(later.immediate).toBe(true);
    admission.apply(one);
    const waiting = pass(admission.request("a", one, { bounded: true }));
    expect(waiting.immediate).toBe(false);
    for (const p of [...held, later]) p.release();
    expect(await waiting.admitted).toBe(true);
    waiting.release();
    expect(admission.counts()).toEqual({ running: 0, queued: 0 });
  });
});

describe("server-side runs under the default caps", () => {
  it("24 concurrent memory bombs from one member: at most the cap run at once, each ends with a reason or a clear refusal; another member is not held back", async () => {
    const settings = await t.caller(t.admin).settings.get();
    expect(settings.codeMode).toMatchObject({ maxServerRuns: 4, maxServerRunsPerUser: 2, maxQueuedRunsPerUser: 16 });
    const other = await makePerson(t, "member");
    const runner = t.platform.runner;
    const originalRun = runner.run.bind(runner);
    let inFlight = 0;
    let maxInFlight = 0;
    let maxMember = 0;
    runner.run = ((...args: Parameters<typeof runner.run>) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      maxMember = Math.max(maxMember, t.platform.admission.counts(member.userId).running);
      return originalRun(...args).finally(() => {
        inFlight -= 1;
      });
    }) as typeof runner.run;
    const admission = t.platform.admission;
    const originalRequest = admission.request.bind(admission);
    const immediateFor = new Map<string, boolean[]>();
    admission.request = ((userId, l, o) => {
      const answer = originalRequest(userId, l, o);
      if (!answer.refused) immediateFor.set(userId, [...(immediateFor.get(userId) ?? []), answer.immediate]);
      return answer;
    }) as typeof admission.request;
    try {
      const caller = t.caller(member);
      const chat = await caller.chats.create({ title: "bombs" });
      const bomb = "const k = []; for (;;) k.push(new Float64Array(1 << 18));";
      const runs = Array.from({ length: 24 }, () =>
        errorOrRecord(caller.codeRuns.runOnServer({ chatId: chat.id, code: bomb, reason: "bomb" })),
      );
      await vi.waitFor(async () => {
        const rows = await t.platform.db.query("select id from code_runs where chat_id = $1 and status = 'Queued'", [
          chat.id,
        ]);
        expect(rows.length).toBeGreaterThan(0);
      });
      const queuedRecord = (await caller.codeRuns.listByChat({ chatId: chat.id })).find((r) => r.status === "Queued");
      expect(queuedRecord?.status).toBe("Queued");

      const otherCaller = t.caller(other);
      const otherChat = await otherCaller.chats.create({ title: "quick" });
      const quick = await otherCaller.codeRuns.runOnServer({ chatId: otherChat.id, code: "return 6 * 7" });
      expect(quick.status).toBe("Completed");
      expect(immediateFor.get(other.userId)).toEqual([true]);

      const outcomes = await Promise.all(runs);
      const records = outcomes.filter((o): o is CodeRunRecord => !(o instanceof TRPCError));
      const refusals = outcomes.filter((o): o is TRPCError => o instanceof TRPCError);
      expect(records.length + refusals.length).toBe(24);
      expect(records.length).toBe(2 + 16);
      for (const r of records) {
        expect(r.status).toBe("Failed");
        expect(r.result).toMatchObject({ _tag: "Failed", reason: "Memory" });
      }
      for (const e of refusals) {
        expect(e.code).toBe("TOO_MANY_REQUESTS");
        expect(e.message).toMatch(/waiting to run on the server .*limit 16/);
      }
      expect(maxInFlight).toBeLessThanOrEqual(settings.codeMode.maxServerRuns);
      expect(maxMember).toBeLessThanOrEqual(settings.codeMode.maxServerRunsPerUser);
      expect(immediateFor.get(member.userId)?.filter(Boolean).length).toBe(2);
      expect(admission.counts()).toEqual({ running: 0, queued: 0 });
      const rows = await t.platform.db.query<{ n: string | number }>(
        "select count(*) as n from code_runs where chat_id = $1",
        [chat.id],
      );
      expect(Number(rows[0]?.n)).toBe(records.length);
    } finally {
      runner.run = originalRun;
      admission.request = originalRequest;
    }
  });

  it("a queued run can be cancelled before it starts", async () => {
    const caller = t.caller(member);
    const chat = await caller.chats.create({ title: "cancel queued" });
    const s = await t.caller(t.admin).settings.get();
    await t.caller(t.admin).settings.update({ expectedVersion: s.version, codeMode: { maxServerRunsPerUser: 1 } });
    try {
      const slow = "let x = 0; for (let i = 0; i < 1e7; i++) x += i; return x;";
      const first = caller.codeRuns.runOnServer({ chatId: chat.id, code: slow });
      const second = caller.codeRuns.runOnServer({ chatId: chat.id, code: "return 2" });
      let queuedId = "";
      await vi.waitFor(async () => {
        const rows = await t.platform.db.query<{ id: string }>(
          "select id from code_runs where chat_id = $1 and status = 'Queued'",
          [chat.id],
        );
        expect(rows.length).toBe(1);
        queuedId = rows[0]!.id;
      });
      const cancelled = await caller.codeRuns.cancel({ id: queuedId });
      expect(cancelled.status).toBe("Cancelled");
      expect((await second).status).toBe("Cancelled");
      expect((await first).status).toBe("Completed");
      expect(t.platform.admission.counts()).toEqual({ running: 0, queued: 0 });
    } finally {
      const now = await t.caller(t.admin).settings.get();
      await t.caller(t.admin).settings.update({ expectedVersion: now.version, codeMode: { maxServerRunsPerUser: 2 } });
    }
  });
});

describe("a change of the caps", () => {
  it("raising maxServerRunsPerUser starts a person's queued run at once, while their first still runs", async () => {
    const caller = t.caller(member);
    const chat = await caller.chats.create({ title: "caps raised" });
    const s = await t.caller(t.admin).settings.get();
    await t.caller(t.admin).settings.update({ expectedVersion: s.version, codeMode: { maxServerRunsPerUser: 1 } });
    try {
      // Spins until it is cancelled (the run's clock is fixed): still running when the second ends.
      const busy = "while (true) {}";
      const first = caller.codeRuns.runOnServer({ chatId: chat.id, code: busy });
      const second = caller.codeRuns.runOnServer({ chatId: chat.id, code: "return 2" });
      await vi.waitFor(async () => {
        const rows = await t.platform.db.query<{ status: string }>(
          "select status from code_runs where chat_id = $1 order by created_at",
          [chat.id],
        );
        expect(rows.map((r) => r.status)).toEqual(["Running", "Queued"]);
      });
      const now = await t.caller(t.admin).settings.get();
      await t.caller(t.admin).settings.update({ expectedVersion: now.version, codeMode: { maxServerRunsPerUser: 2 } });
      expect((await second).status).toBe("Completed");
      const rows = await t.platform.db.query<{ id: string; status: string }>(
        "select id, status from code_runs where chat_id = $1 and status = 'Running'",
        [chat.id],
      );
      expect(rows.length).toBe(1);
      await caller.codeRuns.cancel({ id: rows[0]!.id });
      expect((await first).status).toBe("Cancelled");
    } finally {
      const now = await t.caller(t.admin).settings.get();
      await t.caller(t.admin).settings.update({ expectedVersion: now.version, codeMode: { maxServerRunsPerUser: 2 } });
    }
  });
});

describe("a run left Queued by a process that stopped", () => {
  it("is taken over by the sweep and run to its end", async () => {
    const caller = t.caller(member);
    const chat = await caller.chats.create({ title: "left queued" });
    const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: "return 5" });
    await t.platform.db.query("update code_runs set status = 'Queued', updated_at = $2 where id = $1", [
      ticket!.runId,
      Date.now() - 10 * 60_000,
    ]);
    const swept = await sweepRuns(t.platform);
    expect(swept.resumed).toContain(ticket!.runId);
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: ticket!.runId });
    expect(done.status).toBe("Completed");
    expect(done.result).toMatchObject({ _tag: "Completed", value: 5 });
  });
});

function pass(answer: RunPass | RunRefusal): RunPass {
  if (answer.refused) throw new Error(answer.message);
  return answer;
}

function errorOrRecord(p: Promise<CodeRunRecord>): Promise<CodeRunRecord | TRPCError> {
  return p.catch((e: unknown) => {
    if (e instanceof TRPCError) return e;
    throw e;
  });
}
