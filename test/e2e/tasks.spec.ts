/**
 * MCP Tasks on the built server: a program calls a task-backed tool of a real v2-SDK server
 * (test/apps/fixtures/tasks-server.mjs over HTTP); the run card shows the run Waiting and the call's task
 * working with the App's status message, follows a new message, then shows the result once the task
 * completes. Cancelling a parked run from its card sends `tasks/cancel` to the App. No timed assertions:
 * each step waits for a state.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { admin, signIn } from "./helpers";

const FIXTURE = path.resolve("test/apps/fixtures/tasks-server.mjs");
const APP_PORT = Number(process.env.OPENBOT_E2E_STUB_PORT ?? 3199) - 9;
const APP = `http://127.0.0.1:${APP_PORT}`;

let app: ChildProcess | undefined;

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  app = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, PORT: String(APP_PORT) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    app!.once("exit", () => reject(new Error("the tasks server exited")));
    app!.stderr?.on("data", (chunk: Buffer) => {
      if (/listening on port/.test(chunk.toString())) resolve();
    });
  });
  const current = await (await request.get("/v1/platform/settings", { headers: admin })).json();
  const patched = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: current.version, codeMode: { enabled: true } },
  });
  expect(patched.status()).toBe(200);
  const added = await request.post("/v1/connections", {
    headers: admin,
    data: { name: "Reports", transport: { type: "http", url: `${APP}/mcp` } },
  });
  expect(added.status(), await added.text()).toBe(201);
  const conn = await added.json();
  expect(conn).toMatchObject({ status: "connected", protocolVersion: "2026-07-28" });
  const policies = await request.patch(`/v1/connections/${conn.id}/policies`, {
    headers: admin,
    data: { slow_report: "allow" },
  });
  expect(policies.status(), await policies.text()).toBeLessThan(300);
});

test.afterAll(() => {
  app?.kill();
});

async function parkedRun(request: import("@playwright/test").APIRequestContext, topic: string) {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: `tasks ${topic}` } })).json();
  const r = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: admin,
    data: {
      code: `const r = await apps.reports.slow_report({ topic: "${topic}" })\nreturn r.structuredContent`,
      reason: "a task-backed report",
    },
  });
  expect(r.status(), await r.text()).toBe(200);
  const record = await r.json();
  expect(record.status).toBe("Waiting");
  return { chatId: chat.id as string, record };
}

test("the run card shows the task's status while it works, then the result", async ({ page, request }) => {
  const { chatId } = await parkedRun(request, "otters");
  await signIn(page);
  await page.goto(`/chats/${chatId}`);
  const card = page.getByTestId("run-card").first();
  await expect(card).toHaveAttribute("data-status", "Waiting");
  const task = card.getByTestId("call-task");
  await expect(task).toHaveText("task working · Gathering data on otters");

  await request.post(`${APP}/control/status?message=${encodeURIComponent("Half way there")}`);
  await expect(task).toHaveText("task working · Half way there", { timeout: 45_000 });
  await expect(card).toHaveAttribute("data-status", "Waiting");

  await request.post(`${APP}/control/complete`);
  await expect(card).toHaveAttribute("data-status", "Completed", { timeout: 45_000 });
  await expect(task).toContainText("task completed");
  await expect(card.getByTestId("run-value")).toContainText("otters");
  const stats = await (await request.get(`${APP}/control/stats`)).json();
  expect(stats.created).toBe(1);
});

test("cancelling a parked run from its card sends tasks/cancel to the App", async ({ page, request }) => {
  const { chatId, record } = await parkedRun(request, "moths");
  const taskId = record.calls[0].app.task.id as string;
  await signIn(page);
  await page.goto(`/chats/${chatId}`);
  const card = page.getByTestId("run-card").first();
  await expect(card.getByTestId("call-task")).toContainText("task working");
  await card.getByRole("button", { name: "Cancel run" }).click();
  await expect(card).toHaveAttribute("data-status", "Cancelled");
  await expect(card.getByTestId("call-task")).toContainText("task cancelled", { timeout: 45_000 });
  const stats = await (await request.get(`${APP}/control/stats`)).json();
  expect(stats.cancelled).toContain(taskId);
  expect(stats.states[taskId]).toBe("cancelled");
});
