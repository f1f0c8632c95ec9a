/**
 * The chat's run feed (codeRuns.onChange) starts with one change of its own, sent once it listens: a page
 * that read the runs just before subscribing reads them again, so a run that ended in between (a reload's
 * re-sent result) is not missed. After that, a run of the chat ending is a change.
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
