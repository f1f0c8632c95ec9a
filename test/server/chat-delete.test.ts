/**
 * Deleting a chat takes everything in it: turns, messages, code runs with their calls, App operations and
 * decisions (all the encrypted rows), after stopping its waiting run; another chat keeps its rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTurnToEnd } from "@/server/services/agent/turns";
import { type OpenAIStub, startOpenAIStub } from "../helpers/openai-stub.mjs";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
let stub: OpenAIStub;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  stub = await startOpenAIStub();
  t.platform.modelOverride = undefined;
  const caller = t.caller(t.admin);
  const s = await caller.settings.get();
  await caller.settings.update({
    expectedVersion: s.version,
    model: { provider: "openai-compatible", baseURL: stub.url, model: "stub-1", apiKey: "sk-test" },
  });
});
afterAll(async () => {
  await stub?.close();
  await t?.close();
});

async function rowsOf(chatId: string): Promise<Record<string, number>> {
  const db = t.platform.db;
  const count = async (sql: string) => Number((await db.query<{ n: string }>(sql, [chatId]))[0]?.n ?? 0);
  return {
    chats: await count("select count(*) as n from chats where id = $1"),
    turns: await count("select count(*) as n from turns where chat_id = $1"),
    messages: await count("select count(*) as n from messages where chat_id = $1"),
    code_runs: await count("select count(*) as n from code_runs where chat_id = $1"),
    code_run_calls: await count(
      "select count(*) as n from code_run_calls where run_id in (select id from code_runs where chat_id = $1)",
    ),
    app_operations: await count("select count(*) as n from app_operations where chat_id = $1"),
    decisions: await count("select count(*) as n from decisions where chat_id = $1"),
  };
}

describe("deleting a chat", () => {
  it("removes its turns, messages, runs, calls, App operations and decisions, and leaves other chats alone", async () => {
    const caller = t.caller(t.admin);
    const ctx = { platform: t.platform, principal: t.admin };
    const doomed = await caller.chats.create({});
    const kept = await caller.chats.create({ title: "Kept" });
    await runTurnToEnd(ctx, { chatId: doomed.id, message: "Which calendar meetings are busy?" });
    const waiting = await runTurnToEnd(ctx, { chatId: doomed.id, message: "Send the notes to the team" });
    expect(waiting.status).toBe("Completed");
    await runTurnToEnd(ctx, { chatId: kept.id, message: "Which calendar meetings are busy?" });
    const before = await rowsOf(doomed.id);
    for (const [table, n] of Object.entries(before)) expect(n, table).toBeGreaterThan(0);
    const keptBefore = await rowsOf(kept.id);

    const pendingRun = (await caller.decisions.list({ chatId: doomed.id, status: "pending" }))[0]!.runId!;
    await caller.chats.remove({ id: doomed.id });

    expect(Object.values(await rowsOf(doomed.id)).every((n) => n === 0)).toBe(true);
    const orphanCalls = await t.platform.db.query("select 1 from code_run_calls where run_id = $1", [pendingRun]);
    expect(orphanCalls).toEqual([]);
    expect(await rowsOf(kept.id)).toEqual(keptBefore);
    await expect(caller.chats.byId({ id: doomed.id })).rejects.toThrow("No such chat");
  });
});
