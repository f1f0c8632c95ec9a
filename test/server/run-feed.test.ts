/**
 * The chat's run feed (codeRuns.onChange) starts with one change of its own, sent once it listens: a page
 * that read the runs just before subscribing reads them again, so a run that ended in between (a reload's
 * re-sent result) is not missed. After that, a run of the chat ending is a change, also for a run created
 * while the feed was starting.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

it("starts with a change once it listens, then reports the chat's runs changing", async () => {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({ title: "Feed" });
  const feed = (await caller.codeRuns.onChange({ chatId: chat.id })) as AsyncIterable<{
    runId: string | null;
  }>;
  const iterator = feed[Symbol.asyncIterator]();
  const first = await iterator.next();
  expect(first.value).toMatchObject({ runId: null });
  const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: "return 1" });
  const next = await iterator.next();
  expect(next.value).toMatchObject({ runId: record.id });
  await iterator.return?.();
});

it("a run created while the feed reads the chat's runs still reports its later changes", async () => {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({ title: "Feed race" });
  const db = t.platform.db;
  const query = db.query.bind(db);
  // The run is created (its creation names the chat) just as the feed's read of the chat's runs returns
  // without it: the window between that read and the feed's listening.
  db.query = (async (sql: string, params?: unknown[]) => {
    const rows = await query(sql, params);
    if (sql.startsWith("select id from code_runs where chat_id")) {
      db.query = query;
      t.platform.events.emit("run", { runId: "run_created_meanwhile", chatId: chat.id });
    }
    return rows;
  }) as typeof db.query;
  try {
    const feed = (await caller.codeRuns.onChange({ chatId: chat.id })) as AsyncIterable<{ runId: string | null }>;
    const iterator = feed[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ runId: null });
    expect((await iterator.next()).value).toMatchObject({ runId: "run_created_meanwhile" });
    // Its end names only the run, as endings.ts emits it.
    t.platform.events.emit("run", { runId: "run_created_meanwhile" });
    expect((await iterator.next()).value).toMatchObject({ runId: "run_created_meanwhile" });
    await iterator.return?.();
  } finally {
    db.query = query;
  }
});
