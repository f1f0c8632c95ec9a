/**
 * A write whose outcome is Unknown, end to end on the built server: a program's call reaches a real App
 * (a stdio MCP server with a visible side effect), the server is killed (`kill -9`) before the answer is
 * stored, a restart on the same data dir takes the run over, and the chat shows the "may or may not have
 * happened" card instead of sending the write again. Mark as done continues the program with the typed
 * result; the App saw the write exactly once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { E2E_ADMIN_TOKEN } from "../../playwright.config";
import { admin, adminApi, type BuiltServer, signIn, startBuiltServer } from "./helpers";

const PORT = Number(process.env.OPENBOT_E2E_PORT ?? 3100) + 7;
const BASE = `http://127.0.0.1:${PORT}`;
const FIXTURE = path.resolve("test/server/fixtures/side-effect-server.mjs");

const sideEffects = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test("an Unknown write after a crash: the card asks, Mark as done continues the run, the App saw it once", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-e2e-unknown-"));
  const log = path.join(dataDir, "side-effects.log");
  const env = { OPENBOT_ADMIN_TOKEN: E2E_ADMIN_TOKEN };
  let server: BuiltServer | undefined = await startBuiltServer({ port: PORT, dataDir, env });
  try {
    const api = adminApi(BASE);
    const settings = await api("GET", "/v1/platform/settings");
    await api("PATCH", "/v1/platform/settings", { expectedVersion: settings.version, codeMode: { enabled: true } });
    const conn = await api("POST", "/v1/connections", {
      name: "Side effects",
      transport: { type: "stdio", command: process.execPath, args: [FIXTURE], env: { SIDE_EFFECT_LOG: log } },
    });
    await api("PATCH", `/v1/connections/${conn.id}/policies`, { send: "allow" });
    const chat = await api("POST", "/v1/chats", { title: "crash" });

    // The App holds its answer while the hold file exists: the write has happened, its outcome is not stored.
    writeFileSync(`${log}.hold`, "");
    const pending = fetch(`${BASE}/v1/chats/${chat.id}/code-runs`, {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({
        code: `const r = await apps.side_effects.send({ text: "hello" })\nreturn r.structuredContent ?? r.content`,
        reason: "a write, then a crash",
      }),
    }).catch(() => undefined);
    await until("the App to receive the write", () => sideEffects(log).length === 1 || undefined);
    await server.kill();
    await pending;
    rmSync(`${log}.hold`);
    server = undefined;

    server = await startBuiltServer({ port: PORT, dataDir, env, keepData: true });
    // The dead instance's lease runs out; the sweep takes the run over and it waits for a person.
    const runs = await until("the run to wait for a person", async () => {
      const list = (await api("GET", `/v1/chats/${chat.id}/code-runs`)) as unknown as { status: string }[];
      return list[0]?.status === "Waiting" ? list : undefined;
    });
    expect(runs).toHaveLength(1);
    expect(sideEffects(log)).toHaveLength(1);

    await signIn(page, BASE);
    await page.goto(`${BASE}/chats/${chat.id}`);
    const card = page.getByTestId("unknown-card");
    await expect(card).toContainText("apps.side_effects.send may or may not have happened");
    await card.getByLabel("Result (optional, text or JSON)").fill('{"n": 7}');
    await card.getByRole("button", { name: "Mark as done" }).click();
    await expect(card).toHaveCount(0);
    const runCard = page.getByTestId("run-card").first();
    await expect(runCard).toHaveAttribute("data-status", "Completed", { timeout: 30_000 });
    await expect(runCard.getByTestId("run-value")).toContainText("7");
    expect(sideEffects(log)).toHaveLength(1);
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
