/**
 * A real 2026-07-28 server (fixtures/modern-server.mjs, the v2 server SDK over HTTP) as an `http`
 * connection: the revision is chosen by what the server supports, tools come in a stable order, list
 * results are kept for their ttlMs, an `input_required` result (MRTR) becomes the same PendingInput card
 * as `elicitation/create` and the call is sent again once with the answer and the server's requestState,
 * progress reaches the caller, and cancelling a call cancels it on the App's side. The built-in apps (v1
 * SDK servers) still connect on 2025-11-25 beside it.
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AppProgress, AppRegistry, PendingInput } from "@/server/apps/registry";
import { entryOf, failure, MODERN_SERVER, startApps, startFixtureServer, stop, type TestApps } from "./helpers";

let t: TestApps;
let apps: AppRegistry;
let server: ChildProcess;
let connectionId: string;
const asked: PendingInput[] = [];

const startModern = (env: Record<string, string> = {}) => startFixtureServer(MODERN_SERVER, env);

interface Stats {
  greetRetries: number;
  statesEchoed: (string | null)[];
  waitStarted: number;
  cancelled: number;
  toolLists: number;
}

async function serverStats(binding = "modern.stats"): Promise<Stats> {
  const r = await apps.call(entryOf(apps, binding), {});
  return r.structuredContent as never;
}

beforeAll(async () => {
  t = await startApps({ inputTimeoutMs: 20_000, onElicitation: (input) => asked.push(input) });
  apps = t.registry;
  const started = await startModern();
  server = started.child;
  const view = await apps.add({
    name: "Modern",
    transport: { type: "http", url: `http://127.0.0.1:${started.port}/mcp` },
  });
  expect(view.status).toBe("connected");
  connectionId = view.id;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stop(server);
});

describe("a 2026-07-28 server", () => {
  it("is spoken to on 2026-07-28, and the built-in (older) apps on 2025-11-25 beside it", () => {
    expect(apps.connection(connectionId)?.protocolVersion).toBe("2026-07-28");
    expect(apps.connection("conn_notes")?.protocolVersion).toBe("2025-11-25");
  });

  it("lists its tools in a deterministic order and calls them", async () => {
    expect(apps.connection(connectionId)?.tools.map((x) => x.binding)).toEqual([
      "modern.add",
      "modern.count",
      "modern.greet",
      "modern.link",
      "modern.stats",
      "modern.wait",
    ]);
    const r = await apps.call(entryOf(apps, "modern.add"), { a: 2, b: 3 });
    expect(r.structuredContent).toEqual({ sum: 5 });
  });

  it("input_required: the person answers the same card, the call is retried once with the answer and the state", async () => {
    asked.length = 0;
    const before = await serverStats();
    const error = await failure(apps.call(entryOf(apps, "modern.greet"), {}, { timeoutMs: 20_000 }));
    expect(error.reason).toBe("input_required");
    expect(error.input).toMatchObject({ binding: "modern.greet", tool: "greet", message: "What is your name?" });
    expect(asked).toEqual([error.input]);
    expect(apps.pendingInput(error.input!.id)).toBe(error.input);
    // A wrong answer is refused before anything is sent; the question stays open.
    await expect(error.input!.answer({ action: "accept", content: {} })).rejects.toMatchObject({
      reason: "invalid_arguments",
    });
    const done = await error.input!.answer({ action: "accept", content: { name: "Ada" } });
    expect(JSON.stringify(done.content)).toContain("Hello, Ada!");
    const after = await serverStats();
    expect(after.greetRetries - before.greetRetries).toBe(1);
    expect(after.statesEchoed.at(-1)).toMatch(/^greet-state-\d+$/);
  });

  it("a declined question ends the call with the App's own answer to that", async () => {
    const error = await failure(apps.call(entryOf(apps, "modern.greet"), {}, { timeoutMs: 20_000 }));
    const outcome = await failure(error.input!.answer({ action: "decline" }));
    expect(outcome.reason).toBe("tool_error");
    expect(outcome.message).toContain("declined");
  });

  it("reports progress to the caller, in order", async () => {
    const seen: AppProgress[] = [];
    const r = await apps.call(entryOf(apps, "modern.count"), { steps: 4 }, { onProgress: (p) => seen.push(p) });
    expect(JSON.stringify(r.content)).toContain("counted to 4");
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    expect(seen[0]).toMatchObject({ total: 4, message: "step 1" });
  });

  it("cancelling a call cancels it on the App's side", async () => {
    const before = await serverStats();
    let cancel = (): void => undefined;
    const waiting = apps.call(
      entryOf(apps, "modern.wait"),
      {},
      {
        timeoutMs: 60_000,
        onCancel: (fn) => {
          cancel = fn;
          return () => undefined;
        },
      },
    );
    waiting.catch(() => undefined);
    // Cancel once the App is running the call.
    await vi.waitFor(async () => expect((await serverStats()).waitStarted).toBe(before.waitStarted + 1), {
      timeout: 15_000,
      interval: 100,
    });
    cancel();
    const error = await failure(waiting);
    expect(error.reason).toBe("unavailable");
    await vi.waitFor(async () => expect((await serverStats()).cancelled).toBe(before.cancelled + 1), {
      timeout: 15_000,
      interval: 200,
    });
  });

  it("a call that times out is cancelled on the App's side too", async () => {
    const before = (await serverStats()).cancelled;
    const error = await failure(apps.call(entryOf(apps, "modern.wait"), {}, { timeoutMs: 300 }));
    expect(error.reason).toBe("timeout");
    await vi.waitFor(async () => expect((await serverStats()).cancelled).toBe(before + 1), {
      timeout: 15_000,
      interval: 200,
    });
  });

  it("keeps its list results for their ttlMs, then lists again", async () => {
    expect(apps.connection(connectionId)?.listTtlMs).toBe(60_000);
    const started = await startModern({ MODERN_TTL_MS: "1000" });
    try {
      const view = await apps.add({
        name: "Short",
        transport: { type: "http", url: `http://127.0.0.1:${started.port}/mcp` },
      });
      expect(view.listTtlMs).toBe(1000);
      const first = (await serverStats("short.stats")).toolLists;
      expect(first).toBe(1);
      await vi.waitFor(async () => expect((await serverStats("short.stats")).toolLists).toBeGreaterThan(first), {
        timeout: 15_000,
        interval: 250,
      });
      await apps.remove(view.id);
    } finally {
      await stop(started.child);
    }
  });
});
