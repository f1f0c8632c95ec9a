/**
 * Readiness and metrics over HTTP against the built server: `GET /v1/health` (public) reports the
 * database, its pool and the run queue; `GET /v1/metrics` (Prometheus text; also at `/metrics`) answers
 * admins' keys only: a stranger gets 401 and a member's key 403, before anything is read.
 */
import { expect, test } from "@playwright/test";
import { admin } from "./helpers";

test("health reports readiness: the database, its pool and the queue", async ({ request }) => {
  const r = await request.get("/v1/health");
  expect(r.status()).toBe(200);
  const body = (await r.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ ok: true, database: { kind: "pglite", state: "up" }, pool: { max: 1 } });
  expect(body.runs).toMatchObject({ running: expect.any(Number), queued: expect.any(Number) });
});

test("metrics: an admin's key reads the Prometheus text; a stranger and a member are refused", async ({ request }) => {
  expect((await request.get("/v1/metrics")).status()).toBe(401);
  expect(
    (await request.get("/v1/metrics", { headers: { Authorization: "Bearer obk_not-a-key-0123456789" } })).status(),
  ).toBe(401);
  const user = await request.post("/v1/users", { headers: admin, data: { name: "Metrics member", role: "member" } });
  const { id } = (await user.json()) as { id: string };
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: id, name: "member key", permissions: ["apps.use", "sessions.read", "sessions.write"] },
  });
  const { token } = (await key.json()) as { token: string };
  const member = await request.get("/v1/metrics", { headers: { Authorization: `Bearer ${token}` } });
  expect(member.status()).toBe(403);
  expect(await member.text()).not.toContain("openbot_");

  const r = await request.get("/v1/metrics", { headers: admin });
  expect(r.status()).toBe(200);
  expect(r.headers()["content-type"]).toContain("text/plain");
  const text = await r.text();
  for (const name of [
    "openbot_code_runs",
    "openbot_server_runs",
    "openbot_sandbox_workers",
    "openbot_db_pool_connections",
    "openbot_app_call_duration_seconds",
    "openbot_decision_wait_seconds",
  ])
    expect(text).toContain(`# TYPE ${name} `);
  expect(text).toContain('openbot_server_runs{state="queued"}');

  // At Prometheus's default path too, with the same guard: a stranger and a member are refused there.
  expect((await request.get("/metrics")).status()).toBe(401);
  expect((await request.get("/metrics", { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(403);
  const plain = await request.get("/metrics", { headers: admin });
  expect(plain.status()).toBe(200);
  expect(await plain.text()).toContain("# TYPE openbot_code_runs ");

  // Well-formed text format: every sample is `name{labels} value` under its family's TYPE, and what counts
  // since start is a counter (`_total`) that does not go down between two scrapes.
  const families = exposition(text);
  for (const name of ["openbot_db_work_total", "openbot_sealed_values_total"])
    expect(`${name}: ${families.get(name)?.type}`).toBe(`${name}: counter`);
  const again = exposition(await (await request.get("/v1/metrics", { headers: admin })).text());
  for (const series of ['openbot_db_work_total{kind="statements"}', 'openbot_sealed_values_total{op="open"}']) {
    const [family] = series.split("{") as [string];
    const before = families.get(family)?.samples.get(series);
    const after = again.get(family)?.samples.get(series);
    expect(before, series).toBeGreaterThanOrEqual(0);
    expect(after!, series).toBeGreaterThanOrEqual(before!);
  }
  // The scrape itself asked the database for the runs by status: the statement count has grown.
  const statements = 'openbot_db_work_total{kind="statements"}';
  expect(again.get("openbot_db_work_total")!.samples.get(statements)!).toBeGreaterThan(
    families.get("openbot_db_work_total")!.samples.get(statements)!,
  );
});

/** The families of a Prometheus text exposition; throws naming the first line that is not well formed. */
function exposition(text: string): Map<string, { type: string; samples: Map<string, number> }> {
  const families = new Map<string, { type: string; samples: Map<string, number> }>();
  const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$/;
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      if (families.has(type[1]!)) throw new Error(`metrics: a second TYPE for ${type[1]}`);
      families.set(type[1]!, { type: type[2]!, samples: new Map() });
      continue;
    }
    const sample = SAMPLE.exec(line);
    const value = sample ? Number(sample[3]) : Number.NaN;
    if (!sample || (Number.isNaN(value) && !/^(NaN|[+-]Inf)$/.test(sample[3]!)))
      throw new Error(`metrics: not a sample: ${line}`);
    const name = sample[1]!;
    const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, "")) ?? undefined;
    if (!family) throw new Error(`metrics: ${name} has no TYPE line before it`);
    family.samples.set(`${name}${sample[2] ?? ""}`, value);
  }
  return families;
}
