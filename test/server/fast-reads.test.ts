/**
 * The read-only fast path (server/services/code-runs/reads.ts): a call a built-in App marks readOnlyHint,
 * allowed at once, is sent before anything is written and recorded in one statement after, before the
 * program sees it; every other call keeps the at-most-once guard (its record and its App operation
 * durable before the App hears of it). Observed at the App's door: the real Apps answer, the test only
 * looks at the database when a call reaches them (and, to play a host that dies, holds a call there).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolEntry } from "@/server/apps/registry";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  const admin = t.caller(t.admin);
  const notes = (await admin.connections.list()).find((c) => c.slug === "notes")!;
  await admin.connections.setPolicies({ id: notes.id, policies: { "write-note": "allow" } });
  // Warm: the App's tools, the sandbox, the vault's fingerprint.
  const chat = await admin.chats.create({});
  await admin.codeRuns.runOnServer({
    chatId: chat.id,
    code: `return await apps.work_calendar.list_events({ day: "2026-10-23" })`,
  });
});
afterAll(() => t?.close());

type Call = (entry: ToolEntry, args: unknown, options: unknown) => Promise<unknown>;
interface Sent {
  binding: string;
  /** The run's call rows and App operations when the call reached its App. */
  calls: { idx: number; operation_id: string | null; outcome: boolean }[];
  operations: { status: string; call_index: number }[];
}

/** Every call reaching an App: what the database held at that moment. `hold`: keep matching calls there until released. */
function atTheDoor(hold?: (binding: string) => boolean) {
  const apps = t.platform.apps as unknown as { call: Call };
  const real = apps.call;
  const sent: Sent[] = [];
  const held: { release(): void }[] = [];
  let arrived: () => void = () => undefined;
  const holding = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  apps.call = async (entry, args, options) => {
    const { db } = t.platform;
    const runs = await db.query<{ id: string }>("select id from code_runs order by created_at desc limit 1");
    const runId = runs[0]!.id;
    sent.push({
      binding: entry.binding,
      calls: await db.query(
        "select idx, operation_id, outcome_enc is not null as outcome from code_run_calls where run_id = $1 order by idx",
        [runId],
      ),
      operations: await db.query(
        "select status, call_index from app_operations where run_id = $1 order by started_at",
        [runId],
      ),
    });
    if (hold?.(entry.binding) && held.length === 0) {
      await new Promise<void>((resolve) => {
        held.push({ release: resolve });
        arrived();
      });
    }
    return real.call(t.platform.apps, entry, args, options);
  };
  return {
    sent,
    holding,
    release: () => {
      for (const h of held) h.release();
    },
    restore: () => {
      apps.call = real;
    },
  };
}

/**
 * A server run of `code` in a new chat, held at the door (its first matching call is held there): the run's
 * id and its pending ending (a dead host's own ending is refused, its attempt being over).
 */
async function heldRun(door: ReturnType<typeof atTheDoor>, code: string) {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({});
  const first = caller.codeRuns.runOnServer({ chatId: chat.id, code }).catch((error: unknown) => error);
  await door.holding;
  const runId = (
    await t.platform.db.query<{ id: string }>("select id from code_runs order by created_at desc limit 1")
  )[0]?.id;
  return { first, runId };
}

async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("never happened");
}

describe("the read-only fast path", () => {
  it("a read is sent before anything is written; a write's record and operation are durable before it is sent", async () => {
    const door = atTheDoor();
    try {
      const caller = t.caller(t.admin);
      const chat = await caller.chats.create({});
      const run = await caller.codeRuns.runOnServer({
        chatId: chat.id,
        code: `const e = await apps.work_calendar.list_events({ day: "2026-10-23" })
          const n = await apps.notes.write_note({ title: "fast", body: "path" })
          return [e.structuredContent.events.length, typeof n.structuredContent.id]`,
      });
      expect(run.status).toBe("Completed");
      expect(door.sent.map((s) => s.binding)).toEqual(["work_calendar.list_events", "notes.write_note"]);
      // The read: nothing of it anywhere while the App answers.
      expect(door.sent[0]).toMatchObject({ calls: [], operations: [] });
      // The write: its record linked to its operation, Running, before the App hears of it.
      const write = door.sent[1]!;
      expect(write.calls).toEqual([
        { idx: 0, operation_id: expect.any(String), outcome: true },
        { idx: 1, operation_id: expect.any(String), outcome: false },
      ]);
      expect(write.operations).toEqual([
        { status: "Completed", call_index: 0 },
        { status: "Running", call_index: 1 },
      ]);
      // Afterwards the read's record, operation and place in the order are there like any call's.
      const done = await caller.codeRuns.byId({ id: run.id });
      expect(done.calls.map((c) => [c.index, c.binding, c.app?.status])).toEqual([
        [0, "work_calendar.list_events", "Completed"],
        [1, "notes.write_note", "Completed"],
      ]);
      const order = await t.platform.db.query<{ idx: number; completed_seq: number }>(
        "select idx, completed_seq from code_run_calls where run_id = $1 order by completed_seq",
        [run.id],
      );
      expect(order.map((r) => r.idx)).toEqual([0, 1]);
    } finally {
      door.restore();
    }
  });

  it("a read whose policy asks is not sent before a person decides", async () => {
    const admin = t.caller(t.admin);
    const calendar = (await admin.connections.list()).find((c) => c.slug === "work_calendar")!;
    await admin.connections.setPolicies({ id: calendar.id, policies: { "list-events": "ask" } });
    const door = atTheDoor();
    try {
      const chat = await admin.chats.create({});
      const run = await admin.codeRuns.runOnServer({
        chatId: chat.id,
        code: `return await apps.work_calendar.list_events({ day: "2026-10-23" })`,
      });
      expect(run.status).toBe("Waiting");
      expect(door.sent).toEqual([]);
    } finally {
      door.restore();
      await admin.connections.setPolicies({ id: calendar.id, policies: { "list-events": null } });
    }
  });

  it("a deny stored by another instance, not yet heard of here, keeps the read's answer from the program", async () => {
    const admin = t.caller(t.admin);
    const calendar = (await admin.connections.list()).find((c) => c.slug === "work_calendar")!;
    // Written as another instance would: the row changes, this instance's registry still says allow.
    await t.platform.db.query("update connections set policies = $1 where id = $2", [
      JSON.stringify({ "list-events": "deny" }),
      calendar.id,
    ]);
    const door = atTheDoor();
    try {
      const chat = await admin.chats.create({});
      const run = await admin.codeRuns.runOnServer({
        chatId: chat.id,
        code: `try { await apps.work_calendar.list_events({ day: "2026-10-23" }); return "read" } catch (e) { return e.name }`,
      });
      expect(run.result).toMatchObject({ _tag: "Completed", value: "AppCallDenied" });
      // The read went out before the statement saw the stored deny; its answer was dropped unseen, and the
      // ordinary path recorded the denial (no operation).
      expect(door.sent.map((s) => s.binding)).toEqual(["work_calendar.list_events"]);
      expect(run.calls.map((c) => [c.index, c.rejection?.name, c.app])).toEqual([[0, "AppCallDenied", null]]);
    } finally {
      door.restore();
      await t.platform.db.query("update connections set policies = '{}' where id = $1", [calendar.id]);
    }
  });

  it("a host that dies mid-read leaves nothing: the takeover sends the read again and completes", async () => {
    const door = atTheDoor((b) => b === "work_calendar.list_events");
    try {
      const caller = t.caller(t.admin);
      const { first, runId } = await heldRun(
        door,
        `return (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length`,
      );
      expect(door.sent[0]).toMatchObject({ calls: [], operations: [] });
      // The host "dies" holding the read: its lease is gone, another instance's sweep takes the run over.
      t.platform.activeRuns.delete(runId!);
      await t.platform.db.query("update code_runs set host_instance = 'inst_gone' where id = $1", [runId]);
      expect((await sweepRuns(t.platform)).resumed).toContain(runId);
      await until(async () => (await caller.codeRuns.byId({ id: runId! })).status === "Completed");
      const rows = await t.platform.db.query<{ attempt: number }>("select attempt from code_runs where id = $1", [
        runId,
      ]);
      expect(rows[0]?.attempt).toBe(2);
      expect(door.sent.map((s) => s.binding)).toEqual(["work_calendar.list_events", "work_calendar.list_events"]);
      // The dead host's answer, arriving late, writes nothing: one call, one operation, the re-run's.
      door.release();
      await first;
      const ops = await t.platform.db.query<{ status: string }>("select status from app_operations where run_id = $1", [
        runId,
      ]);
      expect(ops.map((o) => o.status)).toEqual(["Completed"]);
      expect((await caller.codeRuns.byId({ id: runId! })).result).toMatchObject({ _tag: "Completed" });
    } finally {
      door.release();
      door.restore();
    }
  });

  it("a host that dies mid-write leaves it Unknown: the takeover does not send it again", async () => {
    const door = atTheDoor((b) => b === "notes.write_note");
    try {
      const caller = t.caller(t.admin);
      const { first, runId } = await heldRun(
        door,
        `return (await apps.notes.write_note({ title: "once", body: "only" })).structuredContent.id`,
      );
      expect(door.sent[0]?.operations).toEqual([{ status: "Running", call_index: 0 }]);
      t.platform.activeRuns.delete(runId!);
      await t.platform.db.query("update code_runs set host_instance = 'inst_gone' where id = $1", [runId]);
      expect((await sweepRuns(t.platform)).resumed).toContain(runId);
      await until(async () => (await caller.codeRuns.byId({ id: runId! })).status === "Waiting");
      const waiting = await caller.codeRuns.byId({ id: runId! });
      expect(waiting.calls[0]?.unknown?.state).toBe("pending");
      expect(waiting.calls[0]?.app?.status).toBe("Unknown");
      expect(door.sent).toHaveLength(1);
      door.release();
      await first;
    } finally {
      door.release();
      door.restore();
    }
  });
});
