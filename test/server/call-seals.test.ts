/**
 * The sealing work of one nested call, counted (machine-independent): a program's call seals its
 * arguments once (on its call, which its App operation is linked to) and its result once (in the call's
 * outcome, written with the operation's end); the run's record still shows the operation's result,
 * read from that outcome. A call recorded before this change (the operation with its own sealed copy)
 * reads as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
let seals: string[] = [];
let opens: string[] = [];
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  // Count every value the platform seals and opens, by its place (the associated data).
  const { seal, open } = t.platform;
  t.platform.seal = (aad, plaintext) => {
    seals.push(aad);
    return seal(aad, plaintext);
  };
  t.platform.open = (aad, value) => {
    opens.push(aad);
    return open(aad, value);
  };
});
afterAll(() => t?.close());

const program = (n: number, day = "2026-10-23") => `const all = []
for (let i = 0; i < ${n}; i++) all.push(await apps.work_calendar.list_events({ day: ${JSON.stringify(day)} }).catch((e) => e.name))
return all.length`;

async function run(code: string) {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({ title: "Seals" });
  await t.platform.settled();
  seals = [];
  opens = [];
  const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
  await t.platform.settled();
  return { record, seals: [...seals], opens: [...opens] };
}

describe("sealed values per nested call", () => {
  it("a program's call seals its arguments and its result once each", async () => {
    await run(program(1)); // warm: the App's tools, the sandbox
    const one = await run(program(1));
    const many = await run(program(21));
    expect(many.record.status).toBe("Completed");
    const perCall = (many.seals.length - one.seals.length) / 20;
    console.log(
      "seals per nested call:",
      perCall,
      "opens per nested call:",
      (many.opens.length - one.opens.length) / 20,
    );
    // 4 before: the arguments on the call and on its operation, the result on the operation and in the outcome.
    expect(perCall).toBe(2);
    const places = many.seals.filter((aad) => aad.startsWith("code_run_calls:") || aad.startsWith("app_operations:"));
    expect(places.filter((aad) => aad.startsWith("app_operations:"))).toEqual([]);
    expect(places.filter((aad) => aad.endsWith(":args"))).toHaveLength(21);
    expect(places.filter((aad) => aad.endsWith(":outcome"))).toHaveLength(21);
  });

  it("the run's record shows each operation's result, read from the call's outcome", async () => {
    const { record } = await run(program(2));
    expect(record.status).toBe("Completed");
    const rows = await t.platform.db.query<{ args_enc: string | null; result_enc: string | null; status: string }>(
      "select args_enc, result_enc, status from app_operations where run_id = $1 order by call_index",
      [record.id],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toEqual({ args_enc: null, result_enc: null, status: "Completed" });
    for (const call of record.calls) {
      expect(call.arguments).toEqual({ day: "2026-10-23" });
      expect(call.app?.status).toBe("Completed");
      const result = call.app?.result as { structuredContent: { events: unknown[] } };
      expect(result.structuredContent.events.length).toBeGreaterThan(0);
    }
  });

  it("a failed call's operation shows the failure, as an operation stores it", async () => {
    const { record } = await run(program(1, "not a day"));
    expect(record.status).toBe("Completed");
    const app = record.calls[0]?.app;
    expect(app?.status).toBe("Failed");
    const stored = app?.result as { error: { name: string; message: string; details: { reason: string } } };
    expect(stored.error.name).toBe("AppCallFailed");
    // The gateway's own check of the arguments against the tool's schema refused it; nothing reached the App.
    expect(stored.error.details.reason).toBe("invalid_arguments");
    expect(stored.error.message).toMatch(/do not fit its schema/);
  });

  it("an operation that has its own sealed result (recorded before) shows that one", async () => {
    const { record } = await run(program(1));
    const opId = record.calls[0]!.app!.id;
    const own = { content: [{ type: "text", text: "stored on the operation" }] };
    await t.platform.db.query("update app_operations set result_enc = $1 where id = $2", [
      t.platform.seal(`app_operations:${opId}:result`, JSON.stringify(own)),
      opId,
    ]);
    const again = await t.caller(t.admin).codeRuns.byId({ id: record.id });
    expect(again.calls[0]!.app!.result).toEqual(own);
  });
});
