/**
 * An App that asks for input (MCP elicitation, the everything server's trigger-elicitation-request):
 * its App operation waits in InputRequired, the program gets AppInputRequired with details.operationId
 * and goes on; the person answers outside the code and the operation gets its final result.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
  const view = await t.platform.apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
  await t.platform.apps.setPolicies(view.id, { "trigger-elicitation-request": "allow" });
}, 60_000);
afterAll(() => t?.close());

describe("App input (elicitation)", () => {
  it("the program gets AppInputRequired; the answer, given outside the code, completes the App operation", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: `try {
  await apps.everything.trigger_elicitation_request({})
  return "answered inline"
} catch (error) {
  return { name: error.name, operationId: error.details.operationId }
}`,
    });
    expect(record.status).toBe("Completed");
    const value = (record.result as { value: { name: string; operationId: string } }).value;
    expect(value.name).toBe("AppInputRequired");
    expect(record.calls[0]?.app).toMatchObject({ id: value.operationId, status: "InputRequired" });

    const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
    expect(pending).toMatchObject({
      operationId: value.operationId,
      binding: "everything.trigger_elicitation_request",
    });
    expect(pending!.requestedSchema).toMatchObject({ type: "object", required: ["name"] });

    const bad = await caller.appOperations
      .answer({ operationId: value.operationId, answer: { action: "accept", content: { check: true } } })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    const answered = await caller.appOperations.answer({
      operationId: value.operationId,
      answer: { action: "accept", content: { name: "Ada Lovelace", check: true } },
    });
    expect(answered.status).toBe("Completed");
    const after = await caller.codeRuns.byId({ id: record.id });
    expect(after.calls[0]?.app?.status).toBe("Completed");
    expect(JSON.stringify(after.calls[0]?.app?.result)).toContain("Ada Lovelace");
    expect(await caller.appOperations.pendingInputs({ chatId: chat.id })).toEqual([]);
    const again = await caller.appOperations
      .answer({ operationId: value.operationId, answer: { action: "decline" } })
      .catch((e: TRPCError) => e);
    expect((again as TRPCError).code).toBe("CONFLICT");
  });
});
