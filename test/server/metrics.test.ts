/**
 * Metrics and readiness read from a real platform: after a run with calls and a decision the Prometheus
 * text has the runs by status, the App-call latency of the built-in connection, the decision wait, the
 * run queue, the sandbox pool and the database pool; readiness reports the database up. Who may read
 * /v1/metrics is the access table's row (admins); the HTTP refusal of strangers and members is in
 * test/e2e/observability.spec.ts and security-authz.spec.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REST_ACCESS } from "@/contracts/access";
import { readiness } from "@/server/health";
import { renderMetrics } from "@/server/metrics";
import { CALENDAR_PROGRAM, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

/** The value of one sample line, e.g. `openbot_code_runs{status="Completed"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("metrics", () => {
  it("only admins may read them", () => {
    expect(REST_ACCESS["GET /v1/metrics"]).toEqual(["platform.admin"]);
  });

  it("reports runs by status, App-call latency by connection, decision waits, queue and pools", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({ title: "Metrics" });
    const before = await renderMetrics(t.platform);
    const callsBefore =
      sample(before.text, 'openbot_app_call_duration_seconds_count{connection="conn_work_calendar",outcome="ok"}') ?? 0;
    const done = await caller.codeRuns.runOnServer({ chatId: chat.id, code: CALENDAR_PROGRAM });
    expect(done.status).toBe("Completed");
    const paused = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      code: 'return (await apps.email.send_email({ to: "a@example.com", subject: "s", body: "b" })).structuredContent.id',
    });
    const [decision] = (await caller.decisions.list({ chatId: chat.id })).filter((d) => d.runId === paused.id);
    expect(decision).toBeDefined();
    await caller.decisions.decide({ id: decision!.id, decision: "deny" });
    await t.platform.settled();

    const { contentType, text } = await renderMetrics(t.platform);
    expect(contentType).toContain("text/plain");
    expect(sample(text, 'openbot_app_call_duration_seconds_count{connection="conn_work_calendar",outcome="ok"}')).toBe(
      callsBefore + 2,
    );
    expect(text).toContain('openbot_app_call_duration_seconds_bucket{le="+Inf",connection="conn_work_calendar"');
    expect(sample(text, 'openbot_decision_wait_seconds_count{decision="denied"}')).toBe(1);
    const rows = await t.platform.db.query<{ n: number }>(
      "select count(*)::int as n from code_runs where status = 'Completed'",
    );
    expect(sample(text, 'openbot_code_runs{status="Completed"}')).toBe(rows[0]!.n);
    expect(sample(text, 'openbot_server_runs{state="queued"}')).toBe(0);
    expect(sample(text, 'openbot_sandbox_workers{state="alive"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'openbot_db_pool_connections{state="max"}')).toBe(1);
  });

  it("readiness says the database is up, with the pool and the queue", async () => {
    const ready = await readiness(t.platform);
    expect(ready).toMatchObject({
      ok: true,
      database: { kind: "pglite", state: "up" },
      pool: { open: 1, max: 1 },
      runs: { queued: 0 },
    });
  });
});
