/** Shared steps of the browser stories: page objects kept small and addressed by role, label and test id. */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { type APIRequestContext, type BrowserContext, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_TOKEN } from "../../playwright.config";

export const admin = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };

/** Signs in as the admin; `base`: a server other than Playwright's own (one a spec started itself). */
export async function signIn(page: Page, base = "") {
  await page.goto(`${base}/`);
  await page.getByLabel("Token").fill(E2E_ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
}

/** A JSON request as the admin to the server at `base`; anything but a 2xx fails the test, naming the route. */
export function adminApi(base: string) {
  return async (method: string, route: string, data?: unknown): Promise<Record<string, unknown>> => {
    const r = await fetch(`${base}${route}`, {
      method,
      headers: { ...admin, "content-type": "application/json" },
      body: data === undefined ? undefined : JSON.stringify(data),
    });
    const text = await r.text();
    expect(r.status, `${method} ${route}: ${text}`).toBeLessThan(300);
    return JSON.parse(text) as Record<string, unknown>;
  };
}

/** The session cookie a page signed in through the UI holds (`base`: of that server; all cookies without). */
export async function sessionCookie(context: BrowserContext, base?: string): Promise<string> {
  const cookie = (await context.cookies(base)).find((c) => c.name === "openbot_session");
  expect(cookie, "signed in through the UI").toBeTruthy();
  return `openbot_session=${cookie!.value}`;
}

export async function patchSettings(request: APIRequestContext, patch: Record<string, unknown>) {
  const current = await (await request.get("/v1/platform/settings", { headers: admin })).json();
  const r = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: current.version, ...patch },
  });
  expect(r.status()).toBe(200);
  return r.json();
}

export async function newChat(page: Page) {
  await page.getByRole("link", { name: "Chats" }).click();
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chats\/chat_/);
  return page.url().split("/chats/")[1]!;
}

export async function sentMailCount(request: APIRequestContext): Promise<number> {
  const r = await request.get("/api/trpc/connections.emailOutbox", { headers: admin });
  const body = await r.json();
  return body.result.data.emails.length;
}

export { CALENDAR_PROGRAM } from "../../contracts/example-programs.mjs";

export interface BuiltServer {
  /** What the server printed so far (stdout and stderr). */
  log(): string;
  stop(): Promise<void>;
  /** Kills the process at once (`kill -9`): nothing it had in flight is finished or stored. */
  kill(): Promise<void>;
}

/**
 * Starts another built server (`scripts/server.mjs`, as `npm start` does) on `port` with a fresh data dir
 * and extra environment, and waits until `/v1/health` answers. For specs that need their own settings or
 * must read the server's log. `keepData`: start on the data dir as it is (a restart).
 */
export async function startBuiltServer(options: {
  port: number;
  dataDir: string;
  env?: Record<string, string>;
  keepData?: boolean;
}): Promise<BuiltServer> {
  if (!options.keepData) rmSync(options.dataDir, { recursive: true, force: true });
  const child = spawn(process.execPath, ["scripts/server.mjs"], {
    env: {
      ...process.env,
      PORT: String(options.port),
      HOST: "127.0.0.1",
      OPENBOT_DATA_DIR: options.dataDir,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  for (let i = 0; ; i++) {
    const up = await fetch(`http://127.0.0.1:${options.port}/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 400 || child.exitCode !== null) {
      await stop();
      throw new Error(`the server on port ${options.port} did not come up:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };
  return { log: () => log, stop, kill };
}
