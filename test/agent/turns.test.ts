/**
 * The turn loop against the AI SDK's mock models (deterministic): the tools a turn offers, the
 * openbot_run_code description, a program run on the server runner and its result returned to the
 * model, a run that waits for a decision (the turn goes on; the result is posted later and the model
 * continues), and Stop.
 */
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { lastIsTool, lastToolResult, scriptedModel } from "../helpers/mock-model";
import { CALENDAR_PROGRAM, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const toolNames = (call: LanguageModelV3CallOptions) => (call.tools ?? []).map((tool) => tool.name);

describe("turns", () => {
  it("offers the Code Mode tools beside the direct App tools, and runs a program for the model", async () => {
    const seen: LanguageModelV3CallOptions[] = [];
    t.platform.modelOverride = scriptedModel((call) => {
      seen.push(call);
      if (!lastIsTool(call))
        return { toolCall: { name: "openbot_run_code", input: { code: CALENDAR_PROGRAM, reason: "busy meetings" } } };
      const result = lastToolResult(call) as { status: string; value: string[] };
      return { text: `Busy: ${result.value.join(", ")}` };
    });
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Agent" });
    const { runTurnToEnd } = await import("@/server/services/agent/turns");
    const turn = await runTurnToEnd(
      { platform: t.platform, principal: t.admin },
      {
        chatId: chat.id,
        message: "Which meetings are busy?",
      },
    );

    expect(turn.status).toBe("Completed");
    const names = toolNames(seen[0]!);
    expect(names).toContain("openbot_run_code");
    expect(names).toContain("openbot_code_api");
    expect(names).toContain("work_calendar__list_events");
    const runTool = seen[0]!.tools!.find((x) => x.name === "openbot_run_code") as { description: string };
    expect(runTool.description).toContain("apps.work_calendar.list_events({ day: string })");
    expect(runTool.description).toMatch(/list_events\(\{ day: string \}\) -> structuredContent: \{ events: /);
    expect(runTool.description).toContain("AppCallDenied");

    const runs = await caller.codeRuns.listByChat({ chatId: chat.id });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "Completed", turn: turn.id });
    const titles = (runs[0]!.result as { value: string[] }).value;
    expect(titles.length).toBeGreaterThan(0);
    const assistant = turn.messages.filter((m) => m.role === "assistant");
    expect(assistant.at(-1)?.text).toBe(`Busy: ${titles.join(", ")}`);
    const toolCall = assistant.flatMap((m) => m.toolCalls)[0]!;
    expect(toolCall.toolName).toBe("openbot_run_code");
    expect(runs[0]!.callId).toBe(toolCall.toolCallId);
    const toolMessage = turn.messages.find((m) => m.role === "tool");
    expect(toolMessage?.toolResults[0]?.codeRunId).toBe(runs[0]!.id);
  });

  it("does not offer the Code Mode tools while Code Mode is off", async () => {
    const seen: LanguageModelV3CallOptions[] = [];
    t.platform.modelOverride = scriptedModel((call) => {
      seen.push(call);
      return { text: "ok" };
    });
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: false } });
    try {
      const chat = await caller.chats.create({});
      const { runTurnToEnd } = await import("@/server/services/agent/turns");
      await runTurnToEnd({ platform: t.platform, principal: t.admin }, { chatId: chat.id, message: "hi" });
      const names = toolNames(seen[0]!);
      expect(names).not.toContain("openbot_run_code");
      expect(names).toContain("work_calendar__list_events");
    } finally {
      const now = await caller.settings.get();
      await caller.settings.update({ expectedVersion: now.version, codeMode: { enabled: true } });
    }
  });

  it("a run that needs a decision returns waiting at once; after allow the result is posted and the model continues", async () => {
    const program = `const note = await apps.notes.write_note({ title: "Plan", body: "Ship it" })
return { id: note.structuredContent.id }`;
    t.platform.modelOverride = scriptedModel((call) => {
      const result = lastToolResult(call) as { status?: string } | undefined;
      const lastUser = [...call.prompt].reverse().find((m) => m.role === "user");
      const userText = JSON.stringify(lastUser?.content ?? "");
      if (userText.includes("[OpenBot]")) return { text: "The note is written." };
      if (!lastIsTool(call))
        return { toolCall: { name: "openbot_run_code", input: { code: program, reason: "write the plan" } } };
      return { text: `The program is ${result?.status}.` };
    });
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const { runTurnToEnd, listMessages } = await import("@/server/services/agent/turns");
    const turn = await runTurnToEnd(
      { platform: t.platform, principal: t.admin },
      {
        chatId: chat.id,
        message: "Write the plan note",
      },
    );
    expect(turn.status).toBe("Completed");
    expect(turn.messages.filter((m) => m.role === "assistant").at(-1)?.text).toBe("The program is waiting.");

    const [run] = await caller.codeRuns.listByChat({ chatId: chat.id });
    expect(run?.status).toBe("Waiting");
    const pending = await caller.decisions.list({ chatId: chat.id, status: "pending" });
    expect(pending).toHaveLength(1);
    expect(pending[0]!.request).toMatchObject({
      capability: { action: "apps.call" },
      toolCallId: run!.callId,
      app: { binding: "notes.write_note", arguments: { title: "Plan", body: "Ship it" } },
      code: { run: run!.id, index: 0, code: program },
    });
    await caller.decisions.decide({ id: pending[0]!.id, decision: "allow" });
    await t.platform.settled();

    const done = await caller.codeRuns.byId({ id: run!.id });
    expect(done.status).toBe("Completed");
    const messages = await listMessages({ platform: t.platform, principal: t.admin }, chat.id);
    const notice = messages.find((m) => m.role === "notice");
    expect(notice?.text).toContain(`The code run ${run!.id} finished.`);
    expect(notice?.text).toContain('"status":"completed"');
    expect(messages.at(-1)).toMatchObject({ role: "assistant", text: "The note is written." });
  });

  it("a run parked on App input (no decision) posts its result into the chat once the person answers", async () => {
    const view = await t.platform.apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
    await t.platform.apps.setPolicies(view.id, { "trigger-elicitation-request": "allow" });
    try {
      const program = `const r = await apps.everything.trigger_elicitation_request({})
return JSON.stringify(r.content)`;
      t.platform.modelOverride = scriptedModel((call) => {
        const lastUser = [...call.prompt].reverse().find((m) => m.role === "user");
        if (JSON.stringify(lastUser?.content ?? "").includes("[OpenBot]")) return { text: "Got the answer." };
        if (!lastIsTool(call))
          return { toolCall: { name: "openbot_run_code", input: { code: program, reason: "ask the person" } } };
        return { text: `The program is ${(lastToolResult(call) as { status?: string }).status}.` };
      });
      const caller = t.caller(t.admin);
      const chat = await caller.chats.create({});
      const { runTurnToEnd, listMessages } = await import("@/server/services/agent/turns");
      const turn = await runTurnToEnd(
        { platform: t.platform, principal: t.admin },
        { chatId: chat.id, message: "Ask" },
      );
      expect(turn.messages.filter((m) => m.role === "assistant").at(-1)?.text).toBe("The program is waiting.");
      const [run] = await caller.codeRuns.listByChat({ chatId: chat.id });
      expect(await caller.decisions.list({ chatId: chat.id })).toEqual([]);
      const [pending] = await caller.appOperations.pendingInputs({ chatId: chat.id });
      await caller.appOperations.answer({
        operationId: pending!.operationId,
        answer: { action: "accept", content: { name: "Ada Lovelace", check: true } },
      });
      await vi.waitFor(async () => expect((await caller.codeRuns.byId({ id: run!.id })).status).toBe("Completed"), {
        timeout: 30_000,
      });
      await t.platform.settled();
      await vi.waitFor(
        async () => {
          const messages = await listMessages({ platform: t.platform, principal: t.admin }, chat.id);
          const notices = messages.filter((m) => m.role === "notice");
          expect(notices).toHaveLength(1);
          expect(notices[0]!.text).toContain(`The code run ${run!.id} finished.`);
          expect(notices[0]!.text).toContain("Ada Lovelace");
          expect(messages.at(-1)).toMatchObject({ role: "assistant", text: "Got the answer." });
        },
        { timeout: 15_000 },
      );
    } finally {
      await t.platform.apps.remove(view.id);
    }
  }, 60_000);

  it("Stop interrupts the turn and cancels its running program", async () => {
    const program = `let n = 0
for (;;) { n++ }`;
    t.platform.modelOverride = scriptedModel((call) =>
      lastIsTool(call)
        ? { text: "done" }
        : { toolCall: { name: "openbot_run_code", input: { code: program, reason: "spin" } } },
    );
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    await caller.settings.update({ expectedVersion: s.version, codeMode: { timeoutMs: 60000 } });
    const chat = await caller.chats.create({});
    const { startTurn, stopTurn, getTurn } = await import("@/server/services/agent/turns");
    const ctx = { platform: t.platform, principal: t.admin };
    const { turnId, done } = await startTurn(ctx, { chatId: chat.id, message: "spin" }, "server");
    for (let i = 0; i < 100; i++) {
      const runs = await caller.codeRuns.listByChat({ chatId: chat.id });
      if (runs.length > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopTurn(ctx, turnId);
    await done;
    expect((await getTurn(ctx, turnId)).status).toBe("Cancelled");
    const [run] = await caller.codeRuns.listByChat({ chatId: chat.id });
    expect(run?.status).toBe("Cancelled");
    const now = await caller.settings.get();
    await caller.settings.update({ expectedVersion: now.version, codeMode: { timeoutMs: 10000 } });
  });

  it("without a model the chat is in manual mode and a turn says so", async () => {
    t.platform.modelOverride = undefined;
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    expect(await caller.chats.mode()).toMatchObject({ modelConfigured: false });
    const { runTurnToEnd } = await import("@/server/services/agent/turns");
    await expect(
      runTurnToEnd({ platform: t.platform, principal: t.admin }, { chatId: chat.id, message: "hi" }),
    ).rejects.toThrow("manual mode");
  });
});

describe("the real provider wiring against a local OpenAI-compatible server", () => {
  it("streams a openbot_run_code call, runs it, and returns the final answer (an API turn)", async () => {
    const { startOpenAIStub } = await import("../helpers/openai-stub.mjs");
    const stub = await startOpenAIStub();
    try {
      t.platform.modelOverride = undefined;
      const caller = t.caller(t.admin);
      const s = await caller.settings.get();
      await caller.settings.update({
        expectedVersion: s.version,
        model: { provider: "openai-compatible", baseURL: stub.url, model: "stub-1", apiKey: "sk-test-123" },
      });
      const settings = await caller.settings.get();
      expect(settings.model).toEqual({
        provider: "openai-compatible",
        baseURL: stub.url,
        model: "stub-1",
        apiKeySet: true,
      });
      expect(JSON.stringify(settings)).not.toContain("sk-test-123");
      expect(await caller.settings.testModel()).toMatchObject({ ok: true });

      const chat = await caller.chats.create({});
      const { runTurnToEnd } = await import("@/server/services/agent/turns");
      const turn = await runTurnToEnd(
        { platform: t.platform, principal: t.admin },
        {
          chatId: chat.id,
          message: "Which calendar meetings are busy?",
        },
      );
      expect(turn.status).toBe("Completed");
      const [run] = await caller.codeRuns.listByChat({ chatId: chat.id });
      expect(run?.status).toBe("Completed");
      const titles = (run!.result as { value: string[] }).value;
      expect(turn.messages.at(-1)?.text).toBe(`The busy meetings are: ${titles.join(", ")}.`);
      expect(stub.requests.length).toBeGreaterThanOrEqual(3);
      expect(stub.requests[1]!.messages.some((m: { role: string }) => m.role === "tool")).toBe(false);
    } finally {
      const now = await t.caller(t.admin).settings.get();
      await t.caller(t.admin).settings.update({ expectedVersion: now.version, model: null });
      await stub.close();
    }
  });
});
