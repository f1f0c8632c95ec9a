/**
 * The server process as `npm start` runs it: the first start without OPENBOT_ADMIN_TOKEN prints an
 * admin token once and writes it to <data dir>/admin-token (mode 0600); SIGTERM and SIGINT stop it
 * cleanly; a restart keeps the data and prints no new token.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";

const PORT = Number(process.env.OPENBOT_E2E_PORT ?? 3100) + 50;
const base = `http://127.0.0.1:${PORT}`;

function start(dataDir: string): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  let output = "";
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(PORT), HOST: "127.0.0.1", OPENBOT_DATA_DIR: dataDir };
  delete env.OPENBOT_ADMIN_TOKEN;
  const child = spawn(process.execPath, ["scripts/server.mjs"], { env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function healthy() {
  for (let i = 0; i < 120; i++) {
    try {
      const r = await fetch(`${base}/v1/health`);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("the server did not come up");
}

test("first start creates an admin token once; SIGTERM and SIGINT stop cleanly; restart keeps the data", async () => {
  test.setTimeout(120_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-lifecycle-"));
  try {
    const first = start(dataDir);
    await healthy();
    const file = path.join(dataDir, "admin-token");
    const token = readFileSync(file, "utf8").trim();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.output()).toContain(token);
    const me = await fetch(`${base}/v1/platform/settings`, { headers: { Authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    const chat = await (
      await fetch(`${base}/v1/chats`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ title: "kept" }),
      })
    ).json();

    const t0 = Date.now();
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);

    const second = start(dataDir);
    await healthy();
    expect(second.output()).not.toContain(token);
    expect(second.output()).not.toContain("created an admin token");
    const chats = await (await fetch(`${base}/v1/chats`, { headers: { Authorization: `Bearer ${token}` } })).json();
    expect(chats.map((c: { id: string }) => c.id)).toContain(chat.id);
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
