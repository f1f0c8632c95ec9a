/**
 * The database work of one nested call, counted (machine-independent, unlike bench:load's wall clock): a
 * server run of 21 calls to the built-in Work calendar minus a run of 1 call, divided by 20, for calls in
 * sequence and all at once. The calls are reads (readOnlyHint of a built-in App): they need no
 * at-most-once guard, only their outcome written before the program sees it. (A write's budget, its
 * operation written before the App hears of it: test/server/fast-reads.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DbStats } from "@/server/db/client";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const sequential = (n: number) => `let k = 0
for (let i = 0; i < ${n}; i++) k += (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length
return k`;
const parallel = (
  n: number,
) => `const all = await Promise.all(Array.from({ length: ${n} }, () => apps.work_calendar.list_events({ day: "2026-10-23" })))
return all.length`;

async function work(code: string): Promise<DbStats> {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({ title: "Counts" });
  await t.platform.settled();
  const before = t.platform.db.stats();
  const run = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
  await t.platform.settled();
  expect(run.status).toBe("Completed");
  const after = t.platform.db.stats();
  return {
    statements: after.statements - before.statements,
    transactions: after.transactions - before.transactions,
    roundTrips: after.roundTrips - before.roundTrips,
  };
}

async function perCall(program: (n: number) => string): Promise<DbStats> {
  const one = await work(program(1));
  const many = await work(program(21));
  return {
    statements: (many.statements - one.statements) / 20,
    transactions: (many.transactions - one.transactions) / 20,
    roundTrips: (many.roundTrips - one.roundTrips) / 20,
  };
}

describe("database work per nested call", () => {
  it.each([
    // 11 before the call path was merged into fewer statements, then 4 (record, operation start, the App's
    // own query, outcome); 2 now: a read-only call of a built-in App is sent before anything is written and
    // its record, operation and outcome are one statement after (code-runs/reads.ts).
    ["sequential", sequential, 2.5],
    // Calls arriving together share the journal's statements (group commit, server/db/batch.ts): about 4
    // per call before, then 1.5, now about 1.05 (the App's own query is one per call; the reads' one
    // statement is shared).
    ["Promise.all", parallel, 1.3],
  ] as const)("%s: a bounded number of statements and round trips per call", async (_, program, budget) => {
    // Warm: the first run loads the App's tools and the sandbox.
    await work(program(1));
    const counts = await perCall(program);
    console.log(`statements per nested call (${_}):`, counts);
    expect(counts.statements).toBeLessThanOrEqual(budget);
    expect(counts.roundTrips).toBeLessThanOrEqual(budget);
  });
});
