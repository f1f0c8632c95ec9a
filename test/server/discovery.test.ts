/**
 * Discovery inside a program: `apps.$search(query, { limit })` and `apps.$describe("conn.tool")` answer
 * from the run's own catalog without any App call, the same on replay; a `deny` tool is absent from
 * `apps`, the discovery index, the declarations and the run's bindings, and a guessed name is refused as
 * unknown like a name that never existed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HostCallAnswer } from "@/contracts/engine";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const DISCOVER = `const found = await apps.$search("calendar event", { limit: 2 })
const all = await apps.$search("calendar event")
const described = await apps.$describe("work_calendar.list_events")
return {
  bindings: found.results.map((r) => r.binding),
  total: found.total,
  allTotal: all.total,
  policy: described.policy,
  description: described.description,
  declares: described.declaration.includes("list_events("),
  keys: Object.keys(apps).includes("$search"),
}`;

async function setCreateEvent(policy: "deny" | null) {
  await t.caller(t.admin).connections.setPolicies({ id: "conn_work_calendar", policies: { "create-event": policy } });
}

describe("apps.$search and apps.$describe", () => {
  it("answer from the run's catalog, compact and typed, without calling any App", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Discovery" });
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code: DISCOVER });
    expect(record.status).toBe("Completed");
    if (record.result?._tag !== "Completed") throw new Error("not completed");
    const value = record.result.value as Record<string, unknown>;
    expect(value.bindings).toEqual(["work_calendar.create_event", "work_calendar.list_events"]);
    expect(value.total).toBeGreaterThanOrEqual(2);
    expect(value.allTotal).toBe(value.total);
    expect(value).toMatchObject({ policy: "allow", declares: true, keys: false });
    expect(String(value.description).length).toBeGreaterThan(0);
    expect(record.calls.map((c) => c.binding)).toEqual(["$search", "$search", "$describe"]);
    expect(await t.platform.db.query("select id from app_operations where run_id = $1", [record.id])).toEqual([]);
  });

  it("bad arguments are the program's own error", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `const out = []
for (const f of [() => apps.$search(42), () => apps.$search("x", { limit: 0 }), () => apps.$describe("work_calendar.nope")]) {
  try { await f(); out.push("no error") } catch (e) { out.push(e.name + ": " + e.message) }
}
return out`,
    });
    if (record.result?._tag !== "Completed") throw new Error("not completed");
    const [notString, badLimit, unknown] = record.result.value as string[];
    expect(notString).toContain("query must be a string");
    expect(badLimit).toContain("limit must be a whole number");
    expect(unknown).toBe('TypeError: apps.$describe: unknown binding "work_calendar.nope"');
  });

  it("a deny tool is absent everywhere, and calling it by a guessed name is refused as unknown", async () => {
    await setCreateEvent("deny");
    try {
      const caller = t.caller(t.admin);
      const chat = await caller.chats.create({});
      const record = await caller.codeRuns.runOnServer({
        chatId: chat.id,
        code: `const out = { member: typeof apps.work_calendar.create_event }
out.search = (await apps.$search("event")).results.map((r) => r.binding)
try { await apps.$describe("work_calendar.create_event") } catch (e) { out.describe = e.name + ": " + e.message }
try { await apps.call("work_calendar.create_event", {}) } catch (e) { out.call = e.name + ": " + e.message }
return out`,
      });
      if (record.result?._tag !== "Completed") throw new Error("not completed");
      expect(record.result.value).toEqual({
        member: "undefined",
        search: ["work_calendar.list_events"],
        describe: 'TypeError: apps.$describe: unknown binding "work_calendar.create_event"',
        call: 'TypeError: apps.call: unknown binding "work_calendar.create_event"',
      });
      const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: "return 1" });
      expect(ticket!.input.bindings).not.toContain("work_calendar.create_event");
      expect(ticket!.input.bindings).toContain("work_calendar.list_events");
      const { declarations } = await caller.connections.codeApi({ query: "event" });
      expect(declarations).not.toContain("create_event");
      expect(declarations).toContain("list_events");
      // Admins still see and manage the denied tool.
      const calendar = (await caller.connections.list()).find((c) => c.id === "conn_work_calendar")!;
      expect(calendar.tools.find((x) => x.name === "create-event")?.policy).toBe("deny");
    } finally {
      await setCreateEvent(null);
    }
  });

  it("is the same on replay, even after the catalog changed", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: "return 1" });
    const { runId, attempt } = ticket!;
    const ask = () =>
      caller.codeRuns.appCall({
        runId,
        attempt,
        index: 0,
        binding: "$search",
        argsJson: '{"query":"event"}',
      }) as Promise<HostCallAnswer>;
    const first = await ask();
    expect(first.type).toBe("ok");
    expect(first.type === "ok" && JSON.parse(first.resultJson).total).toBe(2);
    await setCreateEvent("deny");
    try {
      expect(await ask()).toEqual(first);
    } finally {
      await setCreateEvent(null);
    }
  });
});
