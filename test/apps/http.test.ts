/**
 * Connections over other real transports: the everything server in Streamable HTTP mode as an `http`
 * connection (calls, a server that goes away and comes back), and a stdio server of our own that has
 * clashing tool names, fails with isError, and adds a tool at run time (tools/list_changed).
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRegistry } from "@/server/apps/registry";
import {
  entryOf,
  failure,
  freePort,
  ODD_SERVER,
  startApps,
  startEverythingHttp,
  stop,
  type TestApps,
  until,
} from "./helpers";

let t: TestApps;
let apps: AppRegistry;
let server: ChildProcess | undefined;
let port: number;

beforeAll(async () => {
  port = await freePort();
  [t, server] = await Promise.all([startApps({ reconnect: { minMs: 100, maxMs: 1000 } }), startEverythingHttp(port)]);
  apps = t.registry;
});
afterAll(async () => {
  await stop(server);
  await t?.close();
});

const entry = (binding: string) => entryOf(apps, binding);

describe("everything server over Streamable HTTP", () => {
  let id: string;
  it("connects as an http connection and calls tools", async () => {
    const view = await apps.add({
      name: "Everything HTTP",
      transport: { type: "http", url: `http://127.0.0.1:${port}/mcp` },
    });
    expect(view.status).toBe("connected");
    id = view.id;
    expect(view.slug).toBe("everything_http");
    expect((await apps.call(entry("everything_http.echo"), { message: "over http" })).content).toEqual([
      { type: "text", text: "Echo: over http" },
    ]);
    expect(JSON.stringify((await apps.call(entry("everything_http.get_sum"), { a: 1, b: 2 })).content)).toContain("3");
    const error = await failure(
      apps.call(entry("everything_http.trigger_long_running_operation"), { duration: 3, steps: 3 }, { timeoutMs: 300 }),
    );
    expect(error.reason).toBe("timeout");
  });

  it("a server that goes away mid-call fails the call without hanging, then the connection recovers", async () => {
    const pending = failure(
      apps.call(
        entry("everything_http.trigger_long_running_operation"),
        { duration: 10, steps: 2 },
        { timeoutMs: 8000 },
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await stop(server);
    const error = await pending;
    expect(error.reason).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(6000);
    const fast = await failure(apps.call(entry("everything_http.echo"), { message: "x" }, { timeoutMs: 5000 }));
    expect(fast.reason).toBe("unavailable");
    await until(() => apps.connection(id)?.status === "failed");
    expect(apps.connection(id)?.error).toBeTruthy();
    server = await startEverythingHttp(port);
    await until(() => apps.connection(id)?.status === "connected", 15_000);
    expect((await apps.call(entry("everything_http.echo"), { message: "again" })).content).toEqual([
      { type: "text", text: "Echo: again" },
    ]);
  });

  it("a URL nobody serves is failed with its error, and keeps retrying", async () => {
    const view = await apps.add({
      name: "Nobody",
      transport: { type: "http", url: `http://127.0.0.1:${await freePort()}/mcp` },
    });
    expect(view.status).toBe("failed");
    expect(view.error).toMatch(/reach|fetch|ECONNREFUSED|connect/i);
    await apps.remove(view.id);
  });
});

describe("a stdio server of our own", () => {
  let id: string;
  beforeAll(async () => {
    const view = await apps.add({
      name: "Odd",
      transport: { type: "stdio", command: process.execPath, args: [ODD_SERVER] },
    });
    expect(view.status).toBe("connected");
    id = view.id;
  });

  it("resolves tool-name clashes deterministically with a warning", () => {
    expect(entry("odd.do_thing").name).toBe("do-thing");
    expect(entry("odd.do_thing_2").name).toBe("do_thing");
    expect(apps.connection(id)!.warnings.join(" ")).toContain('The tool "do_thing"');
    expect(apps.resolve("odd.__proto__")).toBeUndefined();
    expect(apps.resolve("constructor")).toBeUndefined();
    expect(apps.resolve("odd.constructor")).toBeUndefined();
  });

  it("an isError result is a tool_error carrying the result", async () => {
    const error = await failure(apps.call(entry("odd.fail"), {}));
    expect(error.reason).toBe("tool_error");
    expect(error.result).toMatchObject({ isError: true, content: [{ type: "text", text: "It broke." }] });
    expect(error.message).toContain("It broke.");
  });

  it("refreshes the tool list on tools/list_changed", async () => {
    expect(apps.resolve("odd.extra")).toBeUndefined();
    await apps.call(entry("odd.add_tool"), {});
    const extra = await until(() => apps.resolve("odd.extra"), 5000);
    expect(extra.policy).toBe("allow");
    expect((await apps.call(extra, {})).content).toEqual([{ type: "text", text: "extra" }]);
  });

  it("a command that does not exist fails with its error", async () => {
    const view = await apps.add({ name: "Missing", transport: { type: "stdio", command: "/nonexistent/mcp-server" } });
    expect(view.status).toBe("failed");
    expect(view.error).toContain("ENOENT");
    await apps.remove(view.id);
  });
});
