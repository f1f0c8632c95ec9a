/**
 * `input_required` as a durable pause (issue 14 item 3), against a real 2026-07-28 server
 * (test/apps/fixtures/modern-server.mjs, the v2 server SDK over HTTP): a program's call that the App asks
 * for input parks the run as Waiting with no runner slot held, the App's requests and requestState are
 * stored sealed, the person answers (a form, or Done on a URL question) outside the program, and the
 * re-run sends the retry exactly once with `inputResponses` and the server's requestState unchanged.
 * Decline and the question's deadline end the call with AppInputRequired. A restart while parked loses
 * nothing: a new platform on the same data dir takes the answer and completes the run.
 */
import type { ChildProcess } from "node:child_process";
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
import { claimRetry, INPUT_DEADLINE_MS, storeAnswer } from "@/server/services/app-input";
import { principalFromToken } from "@/server/services/auth";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { MODERN_SERVER, startFixtureServer, stop } from "../apps/helpers";
import { BACKENDS } from "../helpers/databases";
import { ADMIN_TOKEN, makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const GREET = `try {
  const r = await apps.modern.greet({})
  return { text: r.content[0].text }
} catch (error) {
  return { name: error.name, details: error.details }
}`;
const LINK = `const r = await apps.modern.link({})
return r.structuredContent`;

let modern: ChildProcess;
let modernUrl: string;

const startModern = () => startFixtureServer(MODERN_SERVER);

interface Stats {
  greetCalls: number;
  greetRetries: number;
  linkRetries: number;
  statesEchoed: (string | null)[];
  answers: unknown[];
}

async function stats(platform: Platform): Promise<Stats> {
  const r = await platform.apps.call(platform.apps.resolve("modern.stats")!, {});
  return r.structuredContent as never;
}

async function addModern(platform: Platform): Promise<void> {
  const view = await platform.apps.add({ name: "Modern", transport: { type: "http", url: modernUrl } });
  // A connect can meet a transient socket error on a loaded machine; the connection retries on its own.
  await vi.waitFor(() => expect(platform.apps.connection(view.id)?.status).toBe("connected"), { timeout: 30_000 });
  await platform.apps.setPolicies(view.id, { greet: "allow", link: "allow", stats: "allow" });
}

function callerOf(platform: Platform, principal: Awaited<ReturnType<typeof principalFromToken>>) {
  return appRouter.createCaller(createContextInner(platform, principal));
}

async function parkedOp(platform: Platform, runId: string) {
  const rows = await platform.db.query<{
    id: string;
    status: string;
    input_enc: string | null;
    input_state_enc: string | null;
    input_answer_enc: string | null;
  }>("select id, status, input_enc, input_state_enc, input_answer_enc from app_operations where run_id = $1", [runId]);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

async function settled(caller: ReturnType<typeof callerOf>, id: string) {
  await vi.waitFor(async () => expect((await caller.codeRuns.byId({ id })).status).toBe("Completed"), {
    timeout: 30_000,
    interval: 100,
  });
  return caller.codeRuns.byId({ id });
}

beforeAll(async () => {
  const started = await startModern();
  modern = started.child;
  modernUrl = `http://127.0.0.1:${started.port}/mcp`;
}, 30_000);
afterAll(() => stop(modern));

describe("a program's call parked on input", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({ codeMode: true });
    await addModern(t.platform);
  }, 60_000);
  afterAll(() => t?.close());

  /** GREET run on a new chat and parked on the App's question: its caller, record and operation. */
  async function parkGreet() {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: GREET });
    expect(record.status).toBe("Waiting");
    return { caller, record, op: await parkedOp(t.platform, record.id) };
  }

  it("parks the run (Waiting, no runner slot), stores the question sealed, and the answer is retried once", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const before = await stats(t.platform);
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: GREET });
    expect(record.status).toBe("Waiting");
    expect(t.platform.admission.counts()).toEqual({ running: 0, queued: 0 });
    expect(t.platform.activeRuns.size).toBe(0);
    expect(record.calls[0]?.app?.status).toBe("InputRequired");
    expect(record.calls[0]?.rejection).toBeNull();

    const op = await parkedOp(t.platform, record.id);
    expect(op.status).toBe("InputRequired");
    expect(op.input_state_enc).toBeTruthy();
    expect(op.input_state_enc).not.toContain("greet-state");
    expect(op.input_enc).not.toContain("What is your name");
    const state = JSON.parse(t.platform.open(`app_operations:${op.id}:input_state`, op.input_state_enc!)) as {
      requestState: string;
    };
    expect(state.requestState).toBe(`greet-state-${before.greetCalls + 1}`);

    const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
    expect(pending).toMatchObject({
      operationId: op.id,
      runId: record.id,
      binding: "modern.greet",
      message: "What is your name?",
      mode: "form",
      url: null,
    });
    expect(pending!.expiresAt).toBeGreaterThan(Date.now());

    // A wrong answer names the field; a stranger and another member cannot answer.
    const bad = await caller.appOperations
      .answer({ operationId: op.id, answer: { action: "accept", content: { nom: "Ada" } } })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("name");
    const member = await makePerson(t, "member");
    const foreign = await t
      .caller(member)
      .appOperations.answer({ operationId: op.id, answer: { action: "decline" } })
      .catch((e: TRPCError) => e);
    expect((foreign as TRPCError).code).toBe("NOT_FOUND");
    const stranger = await t
      .caller(null)
      .appOperations.answer({ operationId: op.id, answer: { action: "decline" } })
      .catch((e: TRPCError) => e);
    expect((stranger as TRPCError).code).toBe("UNAUTHORIZED");

    const answered = await caller.appOperations.answer({
      operationId: op.id,
      answer: { action: "accept", content: { name: "Ada" } },
    });
    expect(answered.status).toBe("InputAnswered");
    const stored = await parkedOp(t.platform, record.id);
    expect(stored.input_answer_enc).not.toContain("Ada");

    const done = await settled(caller, record.id);
    expect((done.result as { value: unknown }).value).toEqual({ text: "Hello, Ada!" });
    expect(done.calls).toHaveLength(1);
    expect(done.calls[0]?.app?.status).toBe("Completed");
    const after = await stats(t.platform);
    expect(after.greetRetries - before.greetRetries).toBe(1);
    expect(after.greetCalls - before.greetCalls).toBe(2);
    expect(after.statesEchoed.at(-1)).toBe(state.requestState);
    expect(after.answers.at(-1)).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toEqual([]);
    const again = await caller.appOperations
      .answer({ operationId: op.id, answer: { action: "decline" } })
      .catch((e: TRPCError) => e);
    expect((again as TRPCError).code).toBe("CONFLICT");
  });

  it("decline: the program's call rejects with AppInputRequired and the App is not asked again", async () => {
    const before = await stats(t.platform);
    const { caller, record, op } = await parkGreet();
    expect((await caller.appOperations.answer({ operationId: op.id, answer: { action: "decline" } })).status).toBe(
      "Failed",
    );
    const done = await settled(caller, record.id);
    expect((done.result as { value: unknown }).value).toMatchObject({
      name: "AppInputRequired",
      details: { operationId: op.id, message: "What is your name?", action: "decline" },
    });
    const after = await stats(t.platform);
    expect(after.greetCalls - before.greetCalls).toBe(1);
    expect(after.greetRetries).toBe(before.greetRetries);
  });

  it("expiry: past its deadline the sweep ends the question and the program sees AppInputRequired", async () => {
    const { caller, record, op } = await parkGreet();
    await sweepRuns(t.platform, Date.now() + INPUT_DEADLINE_MS + 1_000);
    const done = await settled(caller, record.id);
    expect((done.result as { value: unknown }).value).toMatchObject({
      name: "AppInputRequired",
      details: { operationId: op.id, action: "expired" },
    });
  });

  it("at most once: a retry claimed by a host that then died is Unknown, never sent a second time", async () => {
    const before = await stats(t.platform);
    const { caller, record, op } = await parkGreet();
    // The answer is stored, and a host claims the retry (as the re-run does) ...
    expect(await storeAnswer(t.platform, op.id, { action: "accept", content: { name: "Eve" } })).toBe(true);
    const claimed = await claimRetry(t.platform, op.id);
    expect(claimed?.retry.inputResponses).toEqual({ name: { action: "accept", content: { name: "Eve" } } });
    expect(claimed?.retry.requestState).toMatch(/^greet-state-\d+$/);
    // ... only one claimer gets it ...
    expect(await claimRetry(t.platform, op.id)).toBeNull();
    // ... and dies before sending: past every deadline the sweep finds the operation Unknown, re-runs the
    // run, and the call waits for a person instead of being sent again.
    await sweepRuns(t.platform, Date.now() + 5 * 60_000);
    await vi.waitFor(
      async () => expect((await caller.codeRuns.byId({ id: record.id })).calls[0]?.unknown?.state).toBe("pending"),
      { timeout: 30_000, interval: 100 },
    );
    const after = await caller.codeRuns.byId({ id: record.id });
    expect(after.status).toBe("Waiting");
    expect(after.calls[0]?.app?.status).toBe("Unknown");
    const seen = await stats(t.platform);
    expect(seen.greetRetries).toBe(before.greetRetries);
    expect(seen.greetCalls - before.greetCalls).toBe(1);
  });

  it("a URL question: the card carries the link, Done sends the retry with { action: 'accept' }", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const before = await stats(t.platform);
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: LINK });
    expect(record.status, JSON.stringify(record.result)).toBe("Waiting");
    const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
    expect(pending).toMatchObject({ mode: "url", url: "https://example.test/link", binding: "modern.link" });
    await caller.appOperations.answer({
      operationId: pending!.operationId,
      answer: { action: "accept", content: {} },
    });
    const done = await settled(caller, record.id);
    expect((done.result as { value: unknown }).value).toEqual({ linked: true });
    const after = await stats(t.platform);
    expect(after.linkRetries - before.linkRetries).toBe(1);
    expect(after.answers.at(-1)).toEqual({ action: "accept" });
  });
});

describe.each(BACKENDS)("a restart while a run is parked on input ($name)", (backend) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-input-park-"));
  let env: ReturnType<typeof readEnv>;
  let fresh: Awaited<ReturnType<typeof backend.fresh>>;
  let second: Platform | undefined;
  beforeAll(async () => {
    fresh = await backend.fresh();
    env = readEnv({
      OPENBOT_DATA_DIR: dataDir,
      OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN,
      ...(fresh.url ? { DATABASE_URL: fresh.url } : {}),
    });
  });
  afterAll(async () => {
    await second?.close();
    await fresh?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a new platform on the same data dir takes the answer and the App sees one retry", async () => {
    const first = await bootPlatform({ env, inMemoryDb: false });
    let runId: string;
    let chatId: string;
    let before: Stats;
    try {
      const admin = (await principalFromToken(first.db, ADMIN_TOKEN))!;
      const caller = callerOf(first, admin);
      const s = await caller.settings.get();
      await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
      await addModern(first);
      before = await stats(first);
      const chat = await caller.chats.create({});
      chatId = chat.id;
      const record = await caller.codeRuns.runOnServer({ chatId, code: GREET });
      expect(record.status).toBe("Waiting");
      runId = record.id;
    } finally {
      await first.close();
    }

    second = await bootPlatform({ env, inMemoryDb: false });
    const admin = (await principalFromToken(second.db, ADMIN_TOKEN))!;
    const caller = callerOf(second, admin);
    await vi.waitFor(() => expect(second!.apps.resolve("modern.greet")).toBeDefined(), { timeout: 20_000 });
    expect((await caller.codeRuns.byId({ id: runId })).status).toBe("Waiting");
    const [pending] = await caller.appOperations.pendingInputs({ chatId });
    expect(pending).toMatchObject({ runId, message: "What is your name?" });
    await caller.appOperations.answer({
      operationId: pending!.operationId,
      answer: { action: "accept", content: { name: "Grace" } },
    });
    const done = await settled(caller, runId);
    expect((done.result as { value: unknown }).value).toEqual({ text: "Hello, Grace!" });
    const after = await stats(second);
    expect(after.greetRetries - before.greetRetries).toBe(1);
    expect(after.greetCalls - before.greetCalls).toBe(2);
  }, 90_000);
});
