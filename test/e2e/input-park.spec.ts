/**
 * `input_required` as a durable pause, end to end on the built server: a program's call to a real
 * 2026-07-28 App (test/apps/fixtures/modern-server.mjs, the v2 server SDK over HTTP) asks for a name; the
 * run shows Waiting and the chat shows the question's form; the server is restarted on the same data dir;
 * answering the form after the restart completes the run, the chat shows the App's result, and the App
 * saw exactly one retry.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { E2E_ADMIN_TOKEN } from "../../playwright.config";
import { admin, adminApi, type BuiltServer, signIn, startBuiltServer } from "./helpers";

const PORT = Number(process.env.OPENBOT_E2E_PORT ?? 3100) + 8;
const MODERN_PORT = Number(process.env.OPENBOT_E2E_PORT ?? 3100) + 9;
const BASE = `http://127.0.0.1:${PORT}`;
const FIXTURE = path.resolve("test/apps/fixtures/modern-server.mjs");

const api = adminApi(BASE);

let modern: ChildProcess | undefined;
test.beforeAll(async () => {
  modern = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, PORT: String(MODERN_PORT) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    modern!.once("exit", () => reject(new Error("the modern server exited")));
    modern!.stderr!.on("data", (chunk: Buffer) => {
      if (/listening on port/.test(chunk.toString())) resolve();
    });
  });
});
test.afterAll(async () => {
  if (modern && modern.exitCode === null) {
    const exited = new Promise((r) => modern!.once("exit", r));
    modern.kill("SIGTERM");
    await exited;
  }
});

test("a run parked on a 2026-07-28 App's question survives a restart; the chat's answer completes it, sent once", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-e2e-input-park-"));
  const env = { OPENBOT_ADMIN_TOKEN: E2E_ADMIN_TOKEN };
  let server: BuiltServer | undefined = await startBuiltServer({ port: PORT, dataDir, env });
  try {
    const settings = await api("GET", "/v1/platform/settings");
    await api("PATCH", "/v1/platform/settings", { expectedVersion: settings.version, codeMode: { enabled: true } });
    const conn = await api("POST", "/v1/connections", {
      name: "Modern",
      transport: { type: "http", url: `http://127.0.0.1:${MODERN_PORT}/mcp` },
    });
    await api("PATCH", `/v1/connections/${conn.id}/policies`, { greet: "allow", stats: "allow" });
    await api("PATCH", `/v1/connections/${conn.id}`, { untrustedContent: false });
    const chat = await api("POST", "/v1/chats", { title: "a question" });
    const stats = async () => {
      const r = await api("POST", `/v1/chats/${chat.id}/code-runs`, {
        code: "return (await apps.modern.stats({})).structuredContent",
        reason: "what the App saw",
      });
      return (r.result as { value: { greetCalls: number; greetRetries: number } }).value;
    };
    const before = await stats();

    const parked = await api("POST", `/v1/chats/${chat.id}/code-runs`, {
      code: "const r = await apps.modern.greet({})\nreturn r.content[0].text",
      reason: "greet the person",
    });
    expect(parked.status).toBe("Waiting");

    await signIn(page, BASE);
    await page.goto(`${BASE}/chats/${chat.id}`);
    const card = page.locator(`[data-testid="run-card"][data-status="Waiting"]`);
    await expect(card).toHaveCount(1);
    const form = page.getByTestId("input-form");
    await expect(form).toContainText("apps.modern.greet");
    await expect(form).toContainText("What is your name?");

    // Restart on the same data dir while the run is parked: nothing about the question lives in memory.
    await server.stop();
    server = undefined;
    server = await startBuiltServer({ port: PORT, dataDir, env, keepData: true });
    await expect
      .poll(async () => {
        const r = await fetch(`${BASE}/v1/connections`, { headers: admin });
        const all = (await r.json()) as { id: string; status: string }[];
        return all.find((c) => c.id === conn.id)?.status;
      })
      .toBe("connected");

    await page.goto(`${BASE}/chats/${chat.id}`);
    const formAgain = page.getByTestId("input-form");
    await expect(formAgain).toContainText("What is your name?");
    await formAgain.getByLabel("name *", { exact: true }).fill("Ada");
    await formAgain.getByRole("button", { name: "Send answer" }).click();
    await expect(formAgain).toHaveCount(0);

    const done = page.getByTestId("run-card").filter({ hasText: "Hello, Ada!" });
    await expect(done).toHaveAttribute("data-status", "Completed", { timeout: 60_000 });
    await expect(done.getByTestId("run-value")).toContainText("Hello, Ada!");
    const after = await stats();
    expect(after.greetRetries - before.greetRetries).toBe(1);
    expect(after.greetCalls - before.greetCalls).toBe(2);
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
