/**
 * Unknown writes (issue 13, item 5) with the process stopped between the send and the record: a real
 * stdio MCP server with a visible side effect is called, the platform's database goes away while the App
 * is answering (nothing of the outcome is stored), and a second platform on the same data dir takes the
 * run over. The call then waits for a person ("this may or may not have happened"): Mark as done records
 * their result and sends nothing; Send again sends it exactly once more, recorded as theirs; an idempotent
 * tool of a trusted connection is retried once by itself. Nobody else may answer for the run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TRPCError } from "@trpc/server";
import { afterAll, describe, expect, it } from "vitest";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { readEnv } from "@/server/env";
import type { Platform } from "@/server/platform";
import { type Principal, principalFromToken } from "@/server/services/auth";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { ADMIN_TOKEN } from "../helpers/platform";

const SERVER = path.join(import.meta.dirname, "fixtures", "side-effect-server.mjs");
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

const caller = (platform: Platform, p: Principal | null) => appRouter.createCaller(createContextInner(platform, p));

const sideEffects = (log: string) =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { tool: string; args: { text: string } })
    : [];

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * A run whose one call reached the App, after which the process died before the outcome was stored;
 * then a new platform on the same data dir, swept: the run is taken over and reaches the Unknown call.
 */
async function crashBetweenSendAndRecord(tool: "send" | "put") {
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-unknown-"));
  const log = path.join(dataDir, "side-effects.log");
  const env = readEnv({ OPENBOT_DATA_DIR: dataDir, OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN });
  const first = await bootPlatform({ env, inMemoryDb: false });
  const admin = (await principalFromToken(first.db, ADMIN_TOKEN))!;
  const a = caller(first, admin);
  const s = await a.settings.get();
  await a.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
  const conn = await a.connections.create({
    name: "Side effects",
    transport: { type: "stdio", command: process.execPath, args: [SERVER], env: { SIDE_EFFECT_LOG: log } },
  });
  await a.connections.setPolicies({ id: conn.id, policies: { send: "allow", put: "allow" } });
  const chat = await a.chats.create({});
  const code = `const r = await apps.side_effects.${tool}({ text: "hello" })
return r.structuredContent ?? r.content`;
  const { ticket } = await a.codeRuns.start({ chatId: chat.id, code });
  const runId = ticket!.runId;
  writeFileSync(`${log}.hold`, "");
  const inFlight = a.codeRuns
    .appCall({ runId, attempt: 1, index: 0, binding: `side_effects.${tool}`, argsJson: '{"text":"hello"}' })
    .catch((e: Error) => e);
  await until(() => sideEffects(log).length === 1);
  // The process dies: its database is gone before the App's answer can be stored.
  await first.db.close();
  rmSync(`${log}.hold`);
  expect(await inFlight).toBeInstanceOf(Error);
  await first.close().catch(() => undefined);

  const second = await bootPlatform({ env, inMemoryDb: false });
  cleanup.push(async () => {
    await second.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const b = caller(second, admin);
  const crashed = await b.codeRuns.byId({ id: runId });
  expect(crashed.calls[0]!.app?.status).toBe("Running");
  const swept = await sweepRuns(second, Date.now() + 10 * 60_000);
  expect(swept.resumed).toEqual([runId]);
  await second.settled();
  return { platform: second, b, admin, runId, chatId: chat.id, log };
}

describe("Unknown writes", () => {
  it("Mark as done: the run continues with the person's result and the write is never sent again", async () => {
    const { platform, b, runId, log } = await crashBetweenSendAndRecord("send");
    const waiting = await b.codeRuns.byId({ id: runId });
    expect(waiting.status).toBe("Waiting");
    expect(waiting.calls[0]!.app?.status).toBe("Unknown");
    expect(waiting.calls[0]!.unknown).toMatchObject({ state: "pending", by: null });
    expect(sideEffects(log)).toHaveLength(1);
    // Sweeping again neither sends it nor gives up on the run.
    const again = await sweepRuns(platform, Date.now() + 20 * 60_000);
    expect(again.interrupted).not.toContain(runId);
    await platform.settled();
    expect((await b.codeRuns.byId({ id: runId })).status).toBe("Waiting");

    await b.codeRuns.reconcile({ runId, index: 0, action: "done", result: '{"n": 7}' });
    await platform.settled();
    const done = await b.codeRuns.byId({ id: runId });
    expect(done.status).toBe("Completed");
    expect((done.result as { value: unknown }).value).toEqual({ n: 7 });
    expect(done.calls[0]!.unknown).toMatchObject({ state: "done" });
    expect(sideEffects(log)).toHaveLength(1);
    const twice = await b.codeRuns.reconcile({ runId, index: 0, action: "send" }).catch((e: TRPCError) => e);
    expect((twice as TRPCError).code).toBe("CONFLICT");
  }, 180_000);

  it("Send again: sent exactly once more, recorded as the person's; others may not answer", async () => {
    const { platform, b, admin, runId, log } = await crashBetweenSendAndRecord("send");
    expect(sideEffects(log)).toHaveLength(1);
    const anon = await caller(platform, null)
      .codeRuns.reconcile({ runId, index: 0, action: "send" })
      .catch((e: TRPCError) => e);
    expect((anon as TRPCError).code).toBe("UNAUTHORIZED");
    const bad = await b.codeRuns.reconcile({ runId, index: 0, action: "maybe" as never }).catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("action");

    await b.codeRuns.reconcile({ runId, index: 0, action: "send" });
    await platform.settled();
    const done = await b.codeRuns.byId({ id: runId });
    expect(done.status).toBe("Completed");
    expect(done.calls[0]!.unknown).toMatchObject({ state: "sent", by: admin.userId });
    expect(done.calls[0]!.app?.status).toBe("Completed");
    expect(sideEffects(log)).toHaveLength(2);
    // Replaying the finished run's record sends nothing more.
    await sweepRuns(platform, Date.now() + 20 * 60_000);
    await platform.settled();
    expect(sideEffects(log)).toHaveLength(2);
  }, 180_000);

  it("an idempotent tool of a trusted connection is retried once by itself, and the record says so", async () => {
    const { b, runId, log } = await crashBetweenSendAndRecord("put");
    const done = await b.codeRuns.byId({ id: runId });
    expect(done.status).toBe("Completed");
    expect(done.calls[0]!.unknown).toMatchObject({ state: "auto", by: null });
    expect(sideEffects(log).map((e) => e.tool)).toEqual(["put", "put"]);
  }, 180_000);
});
