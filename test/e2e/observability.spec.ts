/**
 * Readiness and metrics over HTTP against the built server: `GET /v1/health` (public) reports the
 * database, its pool and the run queue; `GET /v1/metrics` (Prometheus text) answers admins' keys only: a
 * stranger gets 401 and a member's key 403, before anything is read.
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
});
