/**
 * Who may host a run (take it up in a page, make its calls, finish it): only the person who started it. A
 * run's calls go out as its host (vault rights, per-person App sign-ins), so an admin who opens a member's
 * chat must not run the member's program as the admin. A stranger does not learn that the run exists.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnEvent } from "@/contracts/turn-events";
import { turnEvents } from "@/server/services/agent/turn-feed";
import { startTurn } from "@/server/services/agent/turns";
import { lastIsTool, scriptedModel } from "../helpers/mock-model";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const code = (e: unknown) => (e as TRPCError).code;

describe("hosting a run", () => {
  it("only its creator may claim it, make its calls or finish it; an admin gets 403, a stranger 404", async () => {
    const member = await makePerson(t, "member");
    const stranger = await makePerson(t, "member");
    const owner = t.caller(member);
    const chat = await owner.chats.create({ title: "Member's chat" });
    const { ticket } = await owner.codeRuns.start({ chatId: chat.id, code: "return 1" });
    const { runId, attempt } = ticket!;
    // As a turn's program waits for a page to take it up.
    await t.platform.db.query("update code_runs set claimed_at = null where id = $1", [runId]);
    const call = { runId, attempt, index: 0, binding: "work_calendar.list_events", argsJson: '{"day":"2026-10-23"}' };
    const finish = {
      runId,
      attempt,
      outcome: { status: "completed" as const, valueJson: "2", logs: [], output: [] },
    };

    for (const [who, expected] of [
      [t.admin, "FORBIDDEN"],
      [stranger, "NOT_FOUND"],
    ] as const) {
      const caller = t.caller(who);
      expect(code(await caller.codeRuns.claim({ runId, attempt }).catch((e: unknown) => e))).toBe(expected);
      expect(code(await caller.codeRuns.appCall(call).catch((e: unknown) => e))).toBe(expected);
      expect(code(await caller.codeRuns.finish(finish).catch((e: unknown) => e))).toBe(expected);
    }
    const refused = await t
      .caller(t.admin)
      .codeRuns.claim({ runId, attempt })
      .catch((e: unknown) => e as TRPCError);
    expect((refused as TRPCError).message).toBe("Only the person who started this code run can run it.");
    // Nothing was taken up, called or ended by them.
    const record = await owner.codeRuns.byId({ id: runId });
    expect(record.status).toBe("Running");
    expect(record.calls).toEqual([]);

    const claimed = await owner.codeRuns.claim({ runId, attempt });
    expect(claimed?.runId).toBe(runId);
    expect((await owner.codeRuns.finish(finish)).status).toBe("Completed");
  });

  it("an admin's page on a member's chat does not take the member's programs: no run-request, the server runs it at once", async () => {
    const member = await makePerson(t, "member");
    const chat = await t.caller(member).chats.create({ title: "Watched" });
    // The admin's page listens on the member's chat.
    const abort = new AbortController();
    const seen: TurnEvent[] = [];
    const feed = turnEvents({ platform: t.platform, principal: t.admin }, chat.id, abort.signal);
    const first = feed.next();
    const reading = (async () => {
      try {
        const r = await first;
        if (!r.done) seen.push(r.value);
        for await (const event of feed) seen.push(event);
      } catch {
        // aborted
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await t.platform.cluster.pagePresent(chat.id, t.admin.userId)).toBe(true);
    expect(await t.platform.cluster.pagePresent(chat.id, member.userId)).toBe(false);
    t.platform.modelOverride = scriptedModel((call) =>
      lastIsTool(call)
        ? { text: "done" }
        : { toolCall: { name: "openbot_run_code", input: { code: "return 6 * 7", reason: "test" } } },
    );
    try {
      const { done } = await startTurn(
        { platform: t.platform, principal: member },
        { chatId: chat.id, message: "go" },
        "browser",
      );
      await done;
      const [run] = await t.caller(member).codeRuns.listByChat({ chatId: chat.id });
      expect(run).toMatchObject({ status: "Completed" });
      expect(seen.filter((e) => e.type === "run-request")).toEqual([]);
    } finally {
      t.platform.modelOverride = undefined;
      abort.abort();
      await reading;
    }
  });
});
