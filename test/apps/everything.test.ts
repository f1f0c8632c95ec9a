/**
 * The npm reference servers as presets over stdio: the everything server's tools, resources and prompts,
 * a call past its deadline, an elicitation answered outside the call, and a server killed mid-call
 * (unavailable, then reconnected). The memory and filesystem presets start with their files in the data dir.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRegistry, PendingInput } from "@/server/apps/registry";
import { entryOf, failure, startApps, type TestApps, until } from "./helpers";

let t: TestApps;
let apps: AppRegistry;
let everythingId: string;
const asked: PendingInput[] = [];

beforeAll(async () => {
  t = await startApps({ inputTimeoutMs: 20_000, onElicitation: (input) => asked.push(input) });
  apps = t.registry;
  const view = await apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
  expect(view.status).toBe("connected");
  everythingId = view.id;
});
afterAll(() => t?.close());

const entry = (binding: string) => entryOf(apps, binding);

describe("everything preset (stdio)", () => {
  it("lists tools, resources and prompts with read bindings", () => {
    const view = apps.connection(everythingId)!;
    expect(view.slug).toBe("everything");
    expect(view.transport).toEqual({ type: "preset", preset: "everything" });
    const bindings = view.tools.map((x) => x.binding);
    expect(bindings).toEqual(
      expect.arrayContaining([
        "everything.echo",
        "everything.get_sum",
        "everything.read_resource",
        "everything.get_prompt",
      ]),
    );
    expect(view.resources.length).toBeGreaterThan(0);
    expect(view.prompts.map((p) => p.name)).toContain("simple-prompt");
    expect(entry("everything.echo").policy).toBe("allow");
    expect(entry("everything.trigger_elicitation_request").policy).toBe("ask");
  });

  it("calls echo, get-sum and a tool with an output schema", async () => {
    expect((await apps.call(entry("everything.echo"), { message: "hello" })).content).toEqual([
      { type: "text", text: "Echo: hello" },
    ]);
    const sum = await apps.call(entry("everything.get_sum"), { a: 2, b: 40 });
    expect(JSON.stringify(sum.content)).toContain("42");
    const weather = await apps.call(entry("everything.get_structured_content"), { location: "Chicago" });
    expect(weather.structuredContent).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
    });
    expect((await failure(apps.call(entry("everything.get_sum"), { a: "2", b: 40 }))).reason).toBe("invalid_arguments");
  });

  it("reads a resource and gets a prompt", async () => {
    const uri = apps.connection(everythingId)!.resources[0]!.uri;
    const read = await apps.call(entry("everything.read_resource"), { uri });
    expect((read.structuredContent as { contents: { uri: string }[] }).contents[0]?.uri).toBe(uri);
    const prompt = await apps.call(entry("everything.get_prompt"), { name: "simple-prompt" });
    expect((prompt.structuredContent as { messages: unknown[] }).messages.length).toBeGreaterThan(0);
    expect((await failure(apps.call(entry("everything.get_prompt"), { name: "no-such-prompt" }))).reason).toBe(
      "invalid_arguments",
    );
  });

  it("times out a long call and stays usable", async () => {
    const started = Date.now();
    const error = await failure(
      apps.call(entry("everything.trigger_long_running_operation"), { duration: 5, steps: 5 }, { timeoutMs: 300 }),
    );
    expect(error.reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(apps.connection(everythingId)?.status).toBe("connected");
    expect((await apps.call(entry("everything.echo"), { message: "still here" })).content).toEqual([
      { type: "text", text: "Echo: still here" },
    ]);
  });

  it("an elicitation fails the call with input_required; the answer completes it", async () => {
    const error = await failure(apps.call(entry("everything.trigger_elicitation_request"), {}, { timeoutMs: 5000 }));
    expect(error.reason).toBe("input_required");
    const input = error.input!;
    expect(asked).toContain(input);
    expect(apps.pendingInput(input.id)).toBe(input);
    expect(input).toMatchObject({
      connectionId: everythingId,
      binding: "everything.trigger_elicitation_request",
      state: "pending",
    });
    expect(input.requestedSchema).toMatchObject({ type: "object", required: ["name"] });
    await expect(input.answer({ action: "accept", content: { check: true } })).rejects.toMatchObject({
      reason: "invalid_arguments",
    });
    expect(input.state).toBe("pending");
    const result = await input.answer({ action: "accept", content: { name: "Ada Lovelace", check: true } });
    expect(JSON.stringify(result.content)).toContain("Ada Lovelace");
    expect(input.state).toBe("answered");
    await until(() => apps.pendingInput(input.id) === undefined);
    await expect(input.answer({ action: "decline" })).rejects.toMatchObject({ reason: "unavailable" });
  });

  it("a server killed mid-call: the call fails as unavailable, the connection fails, then reconnects", async () => {
    const pid = apps.processId(everythingId);
    expect(pid).toBeGreaterThan(0);
    const pending = failure(
      apps.call(entry("everything.trigger_long_running_operation"), { duration: 10, steps: 2 }, { timeoutMs: 20_000 }),
    );
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    process.kill(pid!, "SIGKILL");
    const error = await pending;
    expect(error.reason).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(2000);
    const failed = apps.connection(everythingId)!;
    expect(["failed", "connecting"]).toContain(failed.status);
    if (failed.status === "failed") {
      expect(failed.error).toBeTruthy();
      expect((await failure(apps.call(entry("everything.echo"), { message: "x" }))).reason).toBe("unavailable");
    }
    await until(() => apps.connection(everythingId)?.status === "connected", 10_000);
    expect(apps.processId(everythingId)).not.toBe(pid);
    expect((await apps.call(entry("everything.echo"), { message: "back" })).content).toEqual([
      { type: "text", text: "Echo: back" },
    ]);
  });
});

describe("memory and filesystem presets", () => {
  it("start with their files under the data dir", async () => {
    const memory = await apps.add({ name: "Memory", transport: { type: "preset", preset: "memory" } });
    const files = await apps.add({ name: "Files", transport: { type: "preset", preset: "filesystem" } });
    expect([memory.status, files.status]).toEqual(["connected", "connected"]);
    expect(memory.tools.map((x) => x.binding)).toContain("memory.read_graph");
    const graph = await apps.call(entry("memory.read_graph"), {});
    expect(graph.isError).toBeFalsy();
    const folder = path.join(t.dataDir, "apps", files.id, "files");
    expect(existsSync(folder)).toBe(true);
    const written = apps.resolve("files.write_file");
    expect(written?.policy).toBe("ask");
    await apps.call(written!, { path: path.join(folder, "hello.txt"), content: "hi" });
    expect(existsSync(path.join(folder, "hello.txt"))).toBe(true);
    const outside = await failure(apps.call(written!, { path: "/tmp/openbot-outside.txt", content: "no" }));
    expect(outside.reason).toBe("tool_error");
  });
});
