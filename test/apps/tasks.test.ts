/**
 * MCP Tasks on the wire (the 2026-07-28 extension, SEP-2663) against a real v2-SDK server with task-backed
 * tools (fixtures/tasks-server.mjs): a call that allows a task declares the extension and gets the task
 * handle as `task_started`; `tasks/get` reports the status and inlines the result; `tasks/cancel` reaches
 * the App; a call that does not allow tasks never declares the extension (the App answers at once).
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRegistry } from "@/server/apps/registry";
import { isAppCallError } from "@/server/apps/registry";
import { entryOf, startApps, stop, type TestApps } from "./helpers";
import { control, startTasksServer } from "./tasks-fixture";

let t: TestApps;
let apps: AppRegistry;
let server: ChildProcess;
let base: string;
let connectionId: string;

beforeAll(async () => {
  t = await startApps();
  apps = t.registry;
  const started = await startTasksServer();
  server = started.child;
  base = started.base;
  const view = await apps.add({ name: "Reports", transport: { type: "http", url: `${base}/mcp` } });
  expect(view.status).toBe("connected");
  expect(view.protocolVersion).toBe("2026-07-28");
  connectionId = view.id;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stop(server);
});

async function started(binding: string, args: Record<string, unknown>) {
  const error = await apps.call(entryOf(apps, binding), args, { tasks: true }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAppCallError(error) || error.reason !== "task_started" || !error.task) throw new Error(`no task: ${error}`);
  return error.task;
}

describe("a task-backed tool", () => {
  it("answers a call that allows tasks with a task, whose result tasks/get brings once it completed", async () => {
    const task = await started("reports.slow_report", { topic: "otters" });
    expect(task.status).toBe("working");
    expect(task.statusMessage).toBe("Gathering data on otters");
    expect(task.pollIntervalMs).toBeGreaterThan(0);
    expect((await apps.task(connectionId, task.taskId, { type: "get" }))?.status).toBe("working");
    await control(base, "complete");
    const done = await apps.task(connectionId, task.taskId, { type: "get" });
    expect(done?.status).toBe("completed");
    expect(done?.result).toMatchObject({
      content: [{ type: "text", text: "Report on otters: all good." }],
      structuredContent: { topic: "otters", pages: 3 },
    });
  });

  it("answers at once when the call does not allow tasks (the extension is not declared)", async () => {
    const before = (await control(base, "stats")).withoutExtension;
    const r = await apps.call(entryOf(apps, "reports.slow_report"), { topic: "bees" });
    expect(r.content).toEqual([{ type: "text", text: "Report on bees: all good." }]);
    expect((await control(base, "stats")).withoutExtension).toBe(before + 1);
  });

  it("reports a failed task with the App's error", async () => {
    const task = await started("reports.broken_report", {});
    await control(base, "complete");
    const failed = await apps.task(connectionId, task.taskId, { type: "get" });
    expect(failed).toMatchObject({ status: "failed", error: { message: "The printer caught fire" } });
  });

  it("sends tasks/cancel to the App", async () => {
    const task = await started("reports.slow_report", { topic: "moths" });
    await apps.task(connectionId, task.taskId, { type: "cancel" });
    const stats = await control(base, "stats");
    expect(stats.cancelled).toContain(task.taskId);
    expect((await apps.task(connectionId, task.taskId, { type: "get" }))?.status).toBe("cancelled");
  });

  it("asks through input_required and takes the answer with tasks/update", async () => {
    const task = await started("reports.asking_report", {});
    const asking = await apps.task(connectionId, task.taskId, { type: "get" });
    expect(asking?.status).toBe("input_required");
    expect(Object.keys(asking?.inputRequests ?? {})).toEqual(["title"]);
    await apps.task(connectionId, task.taskId, {
      type: "update",
      inputResponses: { title: { action: "accept", content: { title: "Owls" } } },
    });
    const done = await apps.task(connectionId, task.taskId, { type: "get" });
    expect(done).toMatchObject({ status: "completed", result: { structuredContent: { topic: "Owls" } } });
  });
});
