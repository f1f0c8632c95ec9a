/**
 * Progress and cancellation of nested App calls, against a real 2026-07-28 server
 * (test/apps/fixtures/modern-server.mjs): each `notifications/progress` is announced as a run change while
 * the call runs (the run card re-reads the record then) and the last one stays on the call's App operation
 * in the record; cancelling a run cancels its call in flight at the App.
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MODERN_SERVER, startFixtureServer, stop } from "../apps/helpers";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
let server: ChildProcess;
let port = 0;

beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  ({ child: server, port } = await startFixtureServer(MODERN_SERVER));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stop(server);
});

let connectionId = "";
async function connect() {
  const admin = t.caller(t.admin);
  if (connectionId) return admin;
  const conn = await admin.connections.create({
    name: "Modern",
    transport: { type: "http", url: `http://127.0.0.1:${port}/mcp` },
  });
  expect(conn.status).toBe("connected");
  connectionId = conn.id;
  await admin.connections.setPolicies({ id: conn.id, policies: { count: "allow", wait: "allow", stats: "allow" } });
  return admin;
}

async function stats(): Promise<{ waitStarted: number; cancelled: number }> {
  const entry = t.platform.apps.resolve("modern.stats")!;
  return (await t.platform.apps.call(entry, {})).structuredContent as never;
}

describe("nested App calls", () => {
  it("cancelling the run cancels its call in flight at the App", async () => {
    const admin = await connect();
    const before = await stats();
    const chat = await admin.chats.create({});
    const { ticket } = await admin.codeRuns.start({ chatId: chat.id, code: "return await apps.modern.wait({})" });
    const call = admin.codeRuns.appCall({
      runId: ticket!.runId,
      attempt: ticket!.attempt,
      index: 0,
      binding: "modern.wait",
      argsJson: "{}",
    });
    await vi.waitFor(async () => expect((await stats()).waitStarted).toBe(before.waitStarted + 1), {
      timeout: 15_000,
      interval: 100,
    });
    const cancelled = await admin.codeRuns.cancel({ id: ticket!.runId });
    expect(cancelled.status).toBe("Cancelled");
    expect(await call).toMatchObject({ type: "error", name: "AppCallFailed", details: { reason: "unavailable" } });
    await vi.waitFor(async () => expect((await stats()).cancelled).toBe(before.cancelled + 1), {
      timeout: 15_000,
      interval: 200,
    });
  });

  it("progress is announced live and kept in the record", async () => {
    const admin = await connect();
    const chat = await admin.chats.create({});
    let changes = 0;
    const onRun = () => {
      changes += 1;
    };
    t.platform.events.on("run", onRun);
    const record = await admin.codeRuns.runOnServer({
      chatId: chat.id,
      code: `return (await apps.modern.count({ steps: 3 })).content[0].text`,
    });
    t.platform.events.off("run", onRun);
    expect(record.status).toBe("Completed");
    expect(record.result).toMatchObject({ _tag: "Completed", value: "counted to 3" });
    expect(record.calls[0]?.app?.progress).toEqual({ progress: 3, total: 3, message: "step 3" });
    // One announcement per report besides the run's own (start, call, finish).
    expect(changes).toBeGreaterThanOrEqual(3 + 3);
    const calls = await t.platform.db.query<{ progress_enc: string | null }>(
      "select progress_enc from app_operations where run_id = $1",
      [record.id],
    );
    expect(calls[0]?.progress_enc).not.toContain("step 3");
  });
});
