/**
 * Faults stay small: one call that fails on the wire (its socket reset) or is slower than its deadline
 * fails that call only; the calls in flight beside it answer and the connection stays connected. Only an
 * App that is really gone (no answer to a ping) marks the connection failed. Built-in Apps run in process,
 * so an event loop blocked longer than any connect timeout does not fail their calls.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRegistry } from "@/server/apps/registry";
import { entryOf, failure, freePort, startApps, stop, type TestApps, until } from "./helpers";

const FLAKY = path.join(import.meta.dirname, "fixtures", "flaky-http-server.mjs");

let t: TestApps;
let apps: AppRegistry;
let server: ChildProcess | undefined;
let port: number;
let id: string;

async function startFlaky(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [FLAKY], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", () => reject(new Error("the flaky server exited")));
    child.stderr?.on("data", (chunk: Buffer) => {
      if (/listening on port/.test(chunk.toString())) resolve();
    });
  });
  child.stderr?.resume();
  return child;
}

beforeAll(async () => {
  port = await freePort();
  [t, server] = await Promise.all([startApps({ reconnect: { minMs: 100, maxMs: 1000 } }), startFlaky()]);
  apps = t.registry;
  const view = await apps.add({ name: "Flaky", transport: { type: "http", url: `http://127.0.0.1:${port}/mcp` } });
  expect(view.status).toBe("connected");
  id = view.id;
});
afterAll(async () => {
  await stop(server);
  await t?.close();
});

const entry = (binding: string) => entryOf(apps, binding);

describe("faults stay small", () => {
  it("a call whose request is reset fails alone; the calls in flight beside it answer", async () => {
    const slow = Array.from({ length: 8 }, (_, i) =>
      apps.call(entry("flaky.slow"), { ms: 300 + i }, { timeoutMs: 60_000 }),
    );
    const dropped = await failure(apps.call(entry("flaky.drop"), {}, { timeoutMs: 60_000 }));
    expect(dropped.reason).toBe("unavailable");
    const answers = await Promise.all(slow);
    expect(answers.map((a) => a.content)).toEqual(
      Array.from({ length: 8 }, (_, i) => [{ type: "text", text: `slept ${300 + i}` }]),
    );
    // The ping that follows the reset finds the App alive: the connection was never failed.
    await new Promise((r) => setTimeout(r, 500));
    expect(apps.connection(id)?.status).toBe("connected");
    expect((await apps.call(entry("flaky.echo"), { text: "still here" })).content).toEqual([
      { type: "text", text: "still here" },
    ]);
  });

  it("a call slower than its deadline times out alone", async () => {
    const fast = apps.call(entry("flaky.slow"), { ms: 50 }, { timeoutMs: 60_000 });
    const late = await failure(apps.call(entry("flaky.slow"), { ms: 5000 }, { timeoutMs: 200 }));
    expect(late.reason).toBe("timeout");
    expect((await fast).content).toEqual([{ type: "text", text: "slept 50" }]);
    expect(apps.connection(id)?.status).toBe("connected");
  });

  it("an App that is really gone fails the connection, which comes back with the App", async () => {
    await stop(server);
    const gone = await failure(apps.call(entry("flaky.echo"), { text: "x" }, { timeoutMs: 60_000 }));
    expect(gone.reason).toBe("unavailable");
    await until(() => apps.connection(id)?.status === "failed", 30_000);
    server = await startFlaky();
    await until(() => apps.connection(id)?.status === "connected", 30_000);
    expect((await apps.call(entry("flaky.echo"), { text: "back" })).content).toEqual([{ type: "text", text: "back" }]);
  });

  it("built-in Apps answer calls made before the event loop was blocked past any connect timeout", async () => {
    const calls = Array.from({ length: 50 }, (_, i) =>
      apps.call(entry("work_calendar.list_events"), { day: `2026-10-${String(10 + (i % 20)).padStart(2, "0")}` }),
    );
    const until = Date.now() + 11_000;
    while (Date.now() < until) {
      // a saturated event loop: longer than undici's 10 s connect timeout
    }
    const answers = await Promise.all(calls);
    expect(answers).toHaveLength(50);
    expect(apps.connection("conn_work_calendar")?.status).toBe("connected");
  });
});
