/**
 * Traces (issue 15 item 7) with a local OTLP/HTTP receiver: a run with 3 nested calls (one waits for a
 * decision, so two attempts) is one trace with the run's root span, the calls and attempts under it; no
 * argument value or vault secret is anywhere in the exported bytes unless the admin setting is on, and
 * then the secret is still redacted; a real MCP server gets `_meta.traceparent` of the run's trace.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const SERVER = path.join(import.meta.dirname, "fixtures", "trace-server.mjs");
const SECRET = "sk_trace_SecretValue_93be1c";
const ARG = "ARGUMENT-VALUE-7f3a";
let receiver: OtlpReceiver;
let t: TestPlatform;
let log: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver(4310);
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  t = await startTestPlatform({ codeMode: true });
  log = path.join(t.dataDir, "trace-meta.log");
  const caller = t.caller(t.admin);
  const conn = await caller.connections.create({
    name: "Tracer",
    transport: { type: "stdio", command: process.execPath, args: [SERVER], env: { TRACE_LOG: log } },
  });
  await caller.connections.setPolicies({ id: conn.id, policies: { note: "allow" } });
  await caller.vault.create({ name: "trace/key", secret: SECRET, allow: [{ connection: "tracer", tool: "note" }] });
}, 60_000);
afterAll(async () => {
  await t?.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  await receiver?.close();
});

const metaLines = () =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { tool: string; meta: Record<string, unknown> | null })
    : [];

/** Runs the program (its vault call waits for a person, who allows it) and exports the spans. */
async function tracedRun(tag: string) {
  const caller = t.caller(t.admin);
  const chat = await caller.chats.create({});
  const code = `await apps.tracer.note({ text: "${ARG}-${tag}-0" })
await apps.tracer.note({ text: "${ARG}-${tag}-1 " + vault.trace.key })
await apps.tracer.note({ text: "${ARG}-${tag}-2" })
return "done"`;
  const waiting = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
  expect(waiting.status).toBe("Waiting");
  const [decision] = await caller.decisions.list({ chatId: chat.id, status: "pending" });
  await caller.decisions.decide({ id: decision!.id, decision: "allow" });
  await t.platform.settled();
  const done = await caller.codeRuns.byId({ id: waiting.id });
  expect(done.status).toBe("Completed");
  await t.platform.telemetry.flush();
  const [row] = await t.platform.db.query<{ traceparent: string }>("select traceparent from code_runs where id = $1", [
    waiting.id,
  ]);
  const [, traceId, rootId] = row!.traceparent.split("-");
  return {
    runId: waiting.id,
    traceId: traceId!,
    rootId: rootId!,
    spans: receiver.spans.filter((s) => s.traceId === traceId),
  };
}

describe("traces", () => {
  it("one trace per run: the run's root span, 3 call spans and both attempts under it; no argument or secret exported", async () => {
    const before = metaLines().length;
    const { runId, traceId, rootId, spans } = await tracedRun("off");
    const root = spans.filter((s) => s.name === "code_run");
    expect(root).toHaveLength(1);
    expect(root[0]).toMatchObject({ spanId: rootId, parentSpanId: "" });
    expect(root[0]!.attributes).toMatchObject({ "openbot.run.id": runId, "openbot.run.status": "Completed" });
    const calls = spans.filter((s) => s.name === "app_call tracer.note");
    expect(calls).toHaveLength(3);
    for (const c of calls) expect(c.parentSpanId).toBe(rootId);
    expect(calls.map((c) => c.attributes["openbot.call.index"]).sort()).toEqual([0, 1, 2]);
    for (const c of calls)
      expect(c.attributes).toMatchObject({ "openbot.call.outcome": "ok", "openbot.call.binding": "tracer.note" });
    const attempts = spans.filter((s) => s.name === "run_attempt");
    expect(attempts.map((a) => a.attributes["openbot.attempt.outcome"]).sort()).toEqual(["completed", "waiting"]);
    for (const a of attempts) expect(a.parentSpanId).toBe(rootId);
    expect(spans.filter((s) => s.name === "decision_wait").map((s) => s.parentSpanId)).toEqual([rootId]);
    for (const c of calls) expect(c.attributes["openbot.call.arguments"]).toBeUndefined();

    const bytes = Buffer.concat(receiver.raw).toString("utf8");
    expect(bytes).toContain(traceId);
    expect(bytes).not.toContain(ARG);
    expect(bytes).not.toContain(SECRET);

    // The MCP server got the trace context of each call's span: the run's trace id.
    const sent = metaLines().slice(before);
    expect(sent).toHaveLength(3);
    const callIds = new Set(calls.map((c) => c.spanId));
    for (const line of sent) {
      const parts = String(line.meta?.traceparent).split("-");
      expect(parts[0]).toBe("00");
      expect(parts[1]).toBe(traceId);
      expect(callIds.has(parts[2]!)).toBe(true);
    }
  });

  it("with the admin setting on, the arguments are in the spans and the vault secret is still redacted", async () => {
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    expect(s.codeMode.traceArguments).toBe(false);
    await caller.settings.update({ expectedVersion: s.version, codeMode: { traceArguments: true } });
    try {
      const { spans } = await tracedRun("on");
      const args = spans
        .filter((x) => x.name === "app_call tracer.note")
        .sort((a, b) => Number(a.attributes["openbot.call.index"]) - Number(b.attributes["openbot.call.index"]))
        .map((x) => String(x.attributes["openbot.call.arguments"]));
      expect(args[0]).toContain(`${ARG}-on-0`);
      expect(args[1]).toContain(`${ARG}-on-1`);
      expect(args[1]).toContain("⟦hidden:trace/key⟧");
      expect(Buffer.concat(receiver.raw).toString("utf8")).not.toContain(SECRET);
    } finally {
      const now = await caller.settings.get();
      await caller.settings.update({ expectedVersion: now.version, codeMode: { traceArguments: false } });
    }
  });

  it("a call that was not sent has its span too: refused by the gateway, or denied by the person deciding", async () => {
    const caller = t.caller(t.admin);
    const spansOf = async (runId: string) => {
      await t.platform.telemetry.flush();
      const [row] = await t.platform.db.query<{ traceparent: string }>(
        "select traceparent from code_runs where id = $1",
        [runId],
      );
      const [, traceId, rootId] = row!.traceparent.split("-");
      const calls = receiver.spans.filter((s) => s.traceId === traceId && s.name === "app_call tracer.note");
      return { rootId, calls };
    };
    const chat = await caller.chats.create({});
    const program = (text: string) =>
      `try { await apps.tracer.note({ text: ${text} }); return "sent"; } catch (e) { return e.name; }`;

    // A secret the tool may not use: the gateway refuses the call before anyone is asked.
    await caller.vault.create({
      name: "trace/other",
      secret: "sk_other_3c1d",
      allow: [{ connection: "notes", tool: "write-note" }],
    });
    const refused = await caller.codeRuns.runOnServer({ chatId: chat.id, code: program("vault.trace.other") });
    expect(refused.result).toMatchObject({ _tag: "Completed", value: "VaultDenied" });
    const byGateway = await spansOf(refused.id);
    expect(byGateway.calls).toHaveLength(1);
    expect(byGateway.calls[0]!.parentSpanId).toBe(byGateway.rootId);
    expect(byGateway.calls[0]!.attributes).toMatchObject({
      "openbot.call.sent": false,
      "openbot.call.outcome": "VaultDenied",
      "openbot.call.index": 0,
      "openbot.error": "VaultDenied",
    });

    // A vault reference always asks; the person denies.
    const waiting = await caller.codeRuns.runOnServer({ chatId: chat.id, code: program("vault.trace.key") });
    const [decision] = await caller.decisions.list({ chatId: chat.id, status: "pending" });
    await caller.decisions.decide({ id: decision!.id, decision: "deny" });
    await t.platform.settled();
    expect((await caller.codeRuns.byId({ id: waiting.id })).result).toMatchObject({ value: "AppCallDenied" });
    const byPerson = await spansOf(waiting.id);
    expect(byPerson.calls).toHaveLength(1);
    expect(byPerson.calls[0]!.attributes).toMatchObject({
      "openbot.call.sent": false,
      "openbot.call.outcome": "AppCallDenied",
    });
    for (const c of [...byGateway.calls, ...byPerson.calls])
      expect(c.attributes["openbot.call.arguments"]).toBeUndefined();
  });

  it("a member cannot turn traceArguments on, and a non-boolean is refused by name", async () => {
    const member = await makePerson(t, "member");
    const s = await t.caller(t.admin).settings.get();
    const refused = await t
      .caller(member)
      .settings.update({ expectedVersion: s.version, codeMode: { traceArguments: true } })
      .catch((e: TRPCError) => e);
    expect((refused as TRPCError).code).toBe("FORBIDDEN");
    const bad = await t
      .caller(t.admin)
      .settings.update({ expectedVersion: s.version, codeMode: { traceArguments: "yes" as unknown as boolean } })
      .catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("traceArguments");
    expect((await t.caller(t.admin).settings.get()).codeMode.traceArguments).toBe(false);
  });
});
