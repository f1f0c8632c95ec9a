/**
 * Which call an App's question belongs to, with two calls in flight on one connection (the everything
 * server: a long-running operation and the elicitation tool). Over Streamable HTTP the question comes on
 * the asking call's own response stream, so it goes to that call and the other completes untouched.
 * Over stdio nothing on the wire says which call asked: the question is cancelled rather than shown
 * under the wrong call, and a lone call still gets its question.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRegistry, PendingInput } from "@/server/apps/registry";
import { entryOf, failure, freePort, startApps, startEverythingHttp, stop, type TestApps } from "./helpers";

let t: TestApps;
let apps: AppRegistry;
let http: ChildProcess;
const asked: PendingInput[] = [];

beforeAll(async () => {
  t = await startApps({ inputTimeoutMs: 20_000, onElicitation: (input) => asked.push(input) });
  apps = t.registry;
  const port = await freePort();
  http = await startEverythingHttp(port);
  expect((await apps.add({ name: "Local", transport: { type: "preset", preset: "everything" } })).status).toBe(
    "connected",
  );
  expect(
    (await apps.add({ name: "Web", transport: { type: "http", url: `http://127.0.0.1:${port}/mcp` } })).status,
  ).toBe("connected");
  const fixture = path.join(import.meta.dirname, "fixtures", "trouble-server.mjs");
  expect(
    (await apps.add({ name: "Trouble", transport: { type: "stdio", command: process.execPath, args: [fixture] } }))
      .status,
  ).toBe("connected");
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stop(http);
});

const slowArgs = { duration: 1, steps: 1 };

describe("an App's question goes to the call that asked it", () => {
  it("Streamable HTTP: the asking call gets input_required, the other call its own result", async () => {
    asked.length = 0;
    const slow = apps.call(entryOf(apps, "web.trigger_long_running_operation"), slowArgs, { timeoutMs: 20_000 });
    await apps.call(entryOf(apps, "web.echo"), { message: "the slow call is out" });
    const error = await failure(apps.call(entryOf(apps, "web.trigger_elicitation_request"), {}, { timeoutMs: 20_000 }));
    expect(error.reason).toBe("input_required");
    expect(error.input).toMatchObject({
      binding: "web.trigger_elicitation_request",
      tool: "trigger-elicitation-request",
    });
    expect(JSON.stringify((await slow).content)).toContain("Long running operation completed");
    expect(asked).toEqual([error.input]);
    const answered = await error.input!.answer({ action: "accept", content: { name: "Ada" } });
    expect(JSON.stringify(answered.content)).toContain("Name: Ada");
  });

  it("stdio, one call in flight: it gets the question", async () => {
    asked.length = 0;
    const error = await failure(
      apps.call(entryOf(apps, "local.trigger_elicitation_request"), {}, { timeoutMs: 20_000 }),
    );
    expect(error.input).toMatchObject({ binding: "local.trigger_elicitation_request" });
    await error.input!.answer({ action: "decline" });
  });

  it("stdio, two calls in flight: the question is cancelled, neither call is shown the other's question", async () => {
    asked.length = 0;
    const slow = apps.call(entryOf(apps, "local.trigger_long_running_operation"), slowArgs, { timeoutMs: 20_000 });
    await apps.call(entryOf(apps, "local.echo"), { message: "the slow call is out" });
    const ask = await apps.call(entryOf(apps, "local.trigger_elicitation_request"), {}, { timeoutMs: 20_000 });
    expect(JSON.stringify(ask.content)).toContain("cancelled");
    expect(JSON.stringify((await slow).content)).toContain("Long running operation completed");
    expect(asked).toEqual([]);
  });

  it("the mark that ties a request to its call is taken out before it is sent: the App never sees it", async () => {
    const result = await apps.call(entryOf(apps, "trouble.meta"), {});
    expect(JSON.stringify(result.structuredContent)).not.toContain("openbot");
  });
});
