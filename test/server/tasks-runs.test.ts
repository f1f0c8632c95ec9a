/**
 * A program's call to a task-backed tool of a real v2-SDK server (test/apps/fixtures/tasks-server.mjs):
 * the run parks Waiting (no worker held), the durable `poll-task` job shows the task's status on the
 * call's operation and, once the task completes, records its result and runs the program again, which
 * gets the result without the tool being called a second time; a failed task is AppCallFailed; cancelling
 * the run sends `tasks/cancel` and ends the polling; a task's question is the chat's input card and the
 * answer goes to the task; a restart while parked (a new platform on the same data dir) completes it.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { readEnv } from "@/server/env";
import type { Platform } from "@/server/platform";
import { principalFromToken } from "@/server/services/auth";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { stop } from "../apps/helpers";
import { control, startTasksServer } from "../apps/tasks-fixture";
import { BACKENDS } from "../helpers/databases";
import { ADMIN_TOKEN } from "../helpers/platform";

let server: ChildProcess;
let base = "";
let dataDir = "";
let platform: Platform;
let slug = "reports";
/** On Postgres (when the CI one is there) a fresh database of its own, dropped afterwards. */
let database: { url?: string; drop(): Promise<void> } | undefined;
let connectionId = "";

const env = () =>
  readEnv({
    OPENBOT_DATA_DIR: dataDir,
    OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN,
    ...(database?.url ? { DATABASE_URL: database.url } : {}),
  });
const boot = () => bootPlatform({ env: env(), jobPollMs: 100 });

async function admin() {
  const principal = (await principalFromToken(platform.db, ADMIN_TOKEN))!;
  return appRouter.createCaller(createContextInner(platform, principal));
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "openbot-tasks-"));
  database = await BACKENDS.find((b) => b.name === "postgres")?.fresh();
  const started = await startTasksServer();
  server = started.child;
  base = started.base;
  platform = await boot();
  const caller = await admin();
  const s = await caller.settings.get();
  await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
  const conn = await caller.connections.create({ name: "Reports", transport: { type: "http", url: `${base}/mcp` } });
  expect(conn.status).toBe("connected");
  slug = conn.slug;
  connectionId = conn.id;
  await caller.connections.setPolicies({
    id: conn.id,
    policies: { slow_report: "allow", broken_report: "allow", asking_report: "allow" },
  });
}, 60_000);
afterAll(async () => {
  if (connectionId) await (await admin()).connections.remove({ id: connectionId }).catch(() => undefined);
  await platform?.close();
  await database?.drop();
  await stop(server);
  rmSync(dataDir, { recursive: true, force: true });
});

async function parked(code: string) {
  code = code.replaceAll("apps.reports.", `apps.${slug}.`);
  const caller = await admin();
  const chat = await caller.chats.create({});
  const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
  return { caller, chat, record };
}

const byId = async (id: string) => (await admin()).codeRuns.byId({ id });

describe("a task-backed call", () => {
  it("parks the run, shows the task's status, and re-runs with the result once the task completes", async () => {
    const before = await control(base, "stats");
    const { record } = await parked(
      "const r = await apps.reports.slow_report({ topic: 'otters' }); return r.structuredContent;",
    );
    expect(record.status).toBe("Waiting");
    expect(platform.activeRuns.has(record.id)).toBe(false);
    expect(record.calls[0]?.app).toMatchObject({
      status: "Task",
      task: { status: "working", statusMessage: "Gathering data on otters" },
    });
    const opId = record.calls[0]!.app!.id;
    const sealed = await platform.db.query<{ task_enc: string }>("select task_enc from app_operations where id = $1", [
      opId,
    ]);
    expect(sealed[0]?.task_enc).not.toContain("otters");
    // The sweep leaves a run parked on a task alone (it is neither interrupted nor re-run), even long after.
    const swept = await sweepRuns(platform, Date.now() + 3_600_000);
    expect(swept.interrupted).not.toContain(record.id);
    expect(swept.resumed).not.toContain(record.id);
    expect((await byId(record.id)).status).toBe("Waiting");

    await control(base, "status", "Half way there");
    await vi.waitFor(
      async () => expect((await byId(record.id)).calls[0]?.app?.task?.statusMessage).toBe("Half way there"),
      { timeout: 20_000, interval: 100 },
    );
    expect((await byId(record.id)).status).toBe("Waiting");

    await control(base, "complete");
    await vi.waitFor(async () => expect((await byId(record.id)).status).toBe("Completed"), {
      timeout: 40_000,
      interval: 200,
    });
    const done = await byId(record.id);
    expect(done.result).toMatchObject({ _tag: "Completed", value: { topic: "otters", pages: 3 } });
    expect(done.calls[0]?.app).toMatchObject({ status: "Completed", task: { status: "completed" } });
    const after = await control(base, "stats");
    expect(after.created).toBe(before.created + 1);
    expect(after.gets).toBeGreaterThan(before.gets);
  }, 90_000);

  it("a failed task is AppCallFailed for the program", async () => {
    const { record } = await parked(
      `try { await apps.reports.broken_report({}); return "no"; } catch (e) { return { name: e.name, reason: e.details.reason, message: e.message }; }`,
    );
    expect(record.status).toBe("Waiting");
    await control(base, "complete");
    await vi.waitFor(async () => expect((await byId(record.id)).status).toBe("Completed"), {
      timeout: 40_000,
      interval: 200,
    });
    const done = await byId(record.id);
    expect(done.result).toMatchObject({
      _tag: "Completed",
      value: { name: "AppCallFailed", reason: "tool_error", message: "The task failed: The printer caught fire" },
    });
    expect(done.calls[0]?.app).toMatchObject({ status: "Failed", task: { status: "failed" } });
  }, 90_000);

  it("cancelling the run sends tasks/cancel to the App and ends the polling", async () => {
    const { caller, record } = await parked("return await apps.reports.slow_report({ topic: 'moths' });");
    expect(record.status).toBe("Waiting");
    const opId = record.calls[0]!.app!.id;
    const taskId = record.calls[0]!.app!.task!.id;
    const cancelled = await caller.codeRuns.cancel({ id: record.id });
    expect(cancelled.status).toBe("Cancelled");
    await vi.waitFor(async () => expect((await control(base, "stats")).cancelled).toContain(taskId), {
      timeout: 30_000,
      interval: 200,
    });
    await vi.waitFor(
      async () => {
        const jobs = await platform.db.query(
          "select 1 from jobs where kind in ('poll-task', 'cancel-task') and payload like $1",
          [`%${opId}%`],
        );
        expect(jobs).toHaveLength(0);
      },
      { timeout: 30_000, interval: 200 },
    );
    const after = await byId(record.id);
    expect(after.calls[0]?.app).toMatchObject({ status: "Failed", task: { status: "cancelled" } });
    expect((await control(base, "stats")).states[taskId]).toBe("cancelled");
  }, 90_000);

  it("a task's question is the chat's input card; the answer goes to the task and the run completes", async () => {
    const { caller, chat, record } = await parked(
      "const r = await apps.reports.asking_report({}); return r.structuredContent.topic;",
    );
    expect(record.status).toBe("Waiting");
    await vi.waitFor(
      async () => expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toHaveLength(1),
      { timeout: 30_000, interval: 200 },
    );
    const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
    expect(pending).toMatchObject({ message: "Which title should the report have?", binding: `${slug}.asking_report` });
    // Its question stays open past the answer window of an elicitation: the task at the App keeps it.
    await sweepRuns(platform, Date.now() + 3_600_000);
    expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toHaveLength(1);
    expect((await byId(record.id)).calls[0]?.app).toMatchObject({
      status: "InputRequired",
      task: { status: "input_required" },
    });
    const updates = (await control(base, "stats")).updates;
    // An answer that does not fit the App's form is refused, naming the problem; nothing goes to the App.
    await expect(
      caller.appOperations.answer({ operationId: pending!.operationId, answer: { action: "accept", content: {} } }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("title") });
    expect((await control(base, "stats")).updates).toBe(updates);
    expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toHaveLength(1);
    await caller.appOperations.answer({
      operationId: pending!.operationId,
      answer: { action: "accept", content: { title: "Owls" } },
    });
    await vi.waitFor(async () => expect((await byId(record.id)).status).toBe("Completed"), {
      timeout: 40_000,
      interval: 200,
    });
    expect((await byId(record.id)).result).toMatchObject({ _tag: "Completed", value: "Owls" });
    expect((await control(base, "stats")).updates).toBe(updates + 1);
    expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toHaveLength(0);
  }, 90_000);

  it("a vault secret the App echoes in the task's status or result comes back hidden", async () => {
    const caller = await admin();
    const suffix = Math.random().toString(36).slice(2, 8);
    const name = `reports/k${suffix}`;
    const secret = `sk_task_secret_${suffix}`;
    await caller.vault.create({ name, secret, allow: [{ connection: slug, tool: "slow_report" }] });
    try {
      const { chat, record } = await parked(
        `const r = await apps.reports.slow_report({ topic: vault.reports.k${suffix} }); return r.content[0].text;`,
      );
      const [decision] = await caller.decisions.list({ chatId: chat.id, status: "pending" });
      await caller.decisions.decide({ id: decision!.id, decision: "allow" });
      await vi.waitFor(async () => expect((await byId(record.id)).calls[0]?.app?.status).toBe("Task"), {
        timeout: 30_000,
        interval: 200,
      });
      const parkedRecord = await byId(record.id);
      expect(parkedRecord.calls[0]?.app?.task?.statusMessage).toBe(`Gathering data on ⟦hidden:${name}⟧`);
      await control(base, "complete");
      await vi.waitFor(async () => expect((await byId(record.id)).status).toBe("Completed"), {
        timeout: 40_000,
        interval: 200,
      });
      const done = await byId(record.id);
      expect(done.result).toMatchObject({ value: `Report on ⟦hidden:${name}⟧: all good.` });
      expect(JSON.stringify(done)).not.toContain(secret);
    } finally {
      await caller.vault.remove({ name });
    }
  }, 90_000);

  it("a restart while parked on a task goes on polling and completes the run", async () => {
    const { record } = await parked(
      "return (await apps.reports.slow_report({ topic: 'bats' })).structuredContent.topic;",
    );
    expect(record.status).toBe("Waiting");
    await platform.close();
    platform = await boot();
    await control(base, "complete");
    await vi.waitFor(async () => expect((await byId(record.id)).status).toBe("Completed"), {
      timeout: 60_000,
      interval: 200,
    });
    expect((await byId(record.id)).result).toMatchObject({ _tag: "Completed", value: "bats" });
  }, 120_000);
});
