/**
 * An older App that asks for input mid-call (MCP `elicitation/create`, the everything server's
 * trigger-elicitation-request): the program's call parks the run the same way as a 2026-07-28
 * `input_required` (the same card), while the App holds its request open; the person's answer goes to the
 * App, the App's final result becomes the call's outcome, and the run is re-run to completion. That open
 * request lives only in this process: after a restart, answering it ends the call with AppInputRequired
 * (expired) instead of pretending it survived.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { readEnv } from "@/server/env";
import type { Platform } from "@/server/platform";
import { principalFromToken } from "@/server/services/auth";
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from "../helpers/platform";

const ASK = `try {
  const r = await apps.everything.trigger_elicitation_request({})
  return { text: JSON.stringify(r.content) }
} catch (error) {
  return { name: error.name, details: error.details }
}`;

async function addEverything(platform: Platform): Promise<void> {
  const view = await platform.apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
  await platform.apps.setPolicies(view.id, { "trigger-elicitation-request": "allow" });
}

type Caller = ReturnType<typeof appRouter.createCaller>;
async function completed(caller: Caller, id: string) {
  await vi.waitFor(async () => expect((await caller.codeRuns.byId({ id })).status).toBe("Completed"), {
    timeout: 30_000,
    interval: 100,
  });
  return caller.codeRuns.byId({ id });
}

describe("App input (elicitation/create)", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({ codeMode: true });
    await addEverything(t.platform);
  }, 60_000);
  afterAll(() => t?.close());

  it("the run parks on the card; the answer reaches the App and its result is the program's", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: ASK });
    expect(record.status).toBe("Waiting");
    expect(t.platform.admission.counts().running).toBe(0);
    expect(record.calls[0]?.app?.status).toBe("InputRequired");

    const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
    expect(pending).toMatchObject({
      binding: "everything.trigger_elicitation_request",
      mode: "form",
      runId: record.id,
    });
    expect(pending!.requestedSchema).toMatchObject({ type: "object", required: ["name"] });

    const bad = await caller.appOperations
      .answer({ operationId: pending!.operationId, answer: { action: "accept", content: { check: true } } })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("name");
    const answered = await caller.appOperations.answer({
      operationId: pending!.operationId,
      answer: { action: "accept", content: { name: "Ada Lovelace", check: true } },
    });
    expect(answered.status).toBe("Completed");
    const done = await completed(caller, record.id);
    expect(JSON.stringify((done.result as { value: unknown }).value)).toContain("Ada Lovelace");
    expect(done.calls[0]?.app?.status).toBe("Completed");
    expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toEqual([]);
    const again = await caller.appOperations
      .answer({ operationId: pending!.operationId, answer: { action: "decline" } })
      .catch((e: TRPCError) => e);
    expect((again as TRPCError).code).toBe("CONFLICT");
  });
});

describe("a restart while an older App's question is open", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-elicit-restart-"));
  const env = readEnv({ OPENBOT_DATA_DIR: dataDir, OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN });
  let second: Platform | undefined;
  afterAll(async () => {
    await second?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("loses the App's request: answering it ends the call with AppInputRequired (expired)", async () => {
    const first = await bootPlatform({ env, inMemoryDb: false });
    let runId: string;
    let chatId: string;
    try {
      const admin = (await principalFromToken(first.db, ADMIN_TOKEN))!;
      const caller = appRouter.createCaller(createContextInner(first, admin));
      const s = await caller.settings.get();
      await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
      await addEverything(first);
      chatId = (await caller.chats.create({})).id;
      const record = await caller.codeRuns.runOnServer({ chatId, code: ASK });
      expect(record.status).toBe("Waiting");
      runId = record.id;
    } finally {
      await first.close();
    }
    second = await bootPlatform({ env, inMemoryDb: false });
    const admin = (await principalFromToken(second.db, ADMIN_TOKEN))!;
    const caller = appRouter.createCaller(createContextInner(second, admin));
    const [pending] = await caller.appOperations.pendingInputs({ chatId });
    const lost = await caller.appOperations
      .answer({
        operationId: pending!.operationId,
        answer: { action: "accept", content: { name: "Ada", check: true } },
      })
      .catch((e: TRPCError) => e);
    expect((lost as TRPCError).code).toBe("CONFLICT");
    expect((lost as TRPCError).message).toContain("restarted");
    const done = await completed(caller, runId);
    expect((done.result as { value: unknown }).value).toMatchObject({
      name: "AppInputRequired",
      details: { operationId: pending!.operationId, action: "expired" },
    });
  }, 90_000);
});
