/**
 * A page that hosts a run's attempt holds a lease it renews while its program runs (`codeRuns.hostAlive`,
 * every PAGE_HOST_BEAT_MS): the server takes the run over once the page has not been heard of for
 * PAGE_HOST_LEASE_MS (a closed or reloaded tab), whatever the program's time limit, and never while the page
 * renews it. Only the run's host renews it.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_HOST_LEASE_MS } from "@/contracts/code-run";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { CALENDAR_PROGRAM, makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

async function pageRun(caller: ReturnType<TestPlatform["caller"]>) {
  const chat = await caller.chats.create({ title: "Hosted by a page" });
  const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: CALENDAR_PROGRAM });
  const { runId, attempt } = ticket!;
  await caller.codeRuns.appCall({
    runId,
    attempt,
    index: 0,
    binding: "work_calendar.list_events",
    argsJson: '{"day":"2026-10-23"}',
  });
  return { runId, attempt };
}

const updatedAt = async (runId: string) =>
  Number(
    (await t.platform.db.query<{ updated_at: string }>("select updated_at from code_runs where id = $1", [runId]))[0]!
      .updated_at,
  );

describe("a page's lease on the attempt it hosts", () => {
  it("is renewed while the page is there; once it ends the server takes the run over and finishes it", async () => {
    const member = await makePerson(t, "member");
    const caller = t.caller(member);
    const { runId, attempt } = await pageRun(caller);
    // The program computes for a while without a call; its page says it is still there.
    await t.platform.db.query("update code_runs set updated_at = $2 where id = $1", [runId, Date.now() - 60_000]);
    expect(await caller.codeRuns.hostAlive({ runId, attempt })).toEqual({ alive: true });
    const renewed = await updatedAt(runId);
    expect(renewed).toBeGreaterThan(Date.now() - 5_000);
    expect((await sweepRuns(t.platform, renewed + PAGE_HOST_LEASE_MS - 1_000)).resumed).not.toContain(runId);
    // The tab is closed: nothing renews the lease. Once it ends (well within the run's own time limit
    // after its last sign), the server continues the run through replay.
    const swept = await sweepRuns(t.platform, renewed + PAGE_HOST_LEASE_MS + 1_000);
    expect(swept.resumed).toContain(runId);
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: runId });
    expect(done.status).toBe("Completed");
    // The page's call was replayed from the record, not sent again.
    expect(done.calls[0]?.app?.status).toBe("Completed");
    // The page's attempt is over: its lease is not renewed any more.
    expect(await caller.codeRuns.hostAlive({ runId, attempt })).toEqual({ alive: false });
  });

  it("only the run's host renews it: an admin gets 403, a stranger 404, and neither moves it", async () => {
    const member = await makePerson(t, "member");
    const stranger = await makePerson(t, "member");
    const { runId, attempt } = await pageRun(t.caller(member));
    const before = await updatedAt(runId);
    for (const [who, expected] of [
      [t.admin, "FORBIDDEN"],
      [stranger, "NOT_FOUND"],
    ] as const) {
      const refused = await t
        .caller(who)
        .codeRuns.hostAlive({ runId, attempt })
        .catch((e: unknown) => e as TRPCError);
      expect((refused as TRPCError).code).toBe(expected);
    }
    expect(await updatedAt(runId)).toBe(before);
  });
});
