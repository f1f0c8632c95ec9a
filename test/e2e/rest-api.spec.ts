/**
 * The REST routes over real HTTP against the running server: auth, settings (401/403/409/400 and the
 * version), chats, a server-side run of the calendar program in a Node worker thread, and its record.
 */
import { type APIRequestContext, expect, test } from "@playwright/test";
import { admin, CALENDAR_PROGRAM } from "./helpers";

async function settings(request: APIRequestContext) {
  const r = await request.get("/v1/platform/settings", { headers: admin });
  expect(r.status()).toBe(200);
  return (await r.json()) as { version: number; codeMode: Record<string, unknown> };
}

test("health answers 200", async ({ request }) => {
  const r = await request.get("/v1/health");
  expect(r.status()).toBe(200);
  expect(await r.json()).toMatchObject({ ok: true });
});

test("settings: 401 without a token, 409 on a stale version, 400 naming the field, version +1 per change", async ({
  request,
}) => {
  expect((await request.get("/v1/platform/settings")).status()).toBe(401);
  expect((await request.get("/v1/platform/settings", { headers: { Authorization: "Bearer nope" } })).status()).toBe(
    401,
  );

  const before = await settings(request);
  const ok = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: {
      expectedVersion: before.version,
      codeMode: { enabled: true, timeoutMs: 30000, memoryMb: 64, outputBytes: 65536 },
    },
  });
  expect(ok.status()).toBe(200);
  const after = await ok.json();
  expect(after.version).toBe(before.version + 1);
  expect(after.codeMode).toMatchObject({ enabled: true, timeoutMs: 30000 });

  const stale = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: before.version, codeMode: { timeoutMs: 20000 } },
  });
  expect(stale.status()).toBe(409);
  const staleBody = await stale.json();
  expect(staleBody.error.details.currentVersion).toBe(after.version);
  expect(staleBody.error.details.current.codeMode.timeoutMs).toBe(30000);

  const bad = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: after.version, codeMode: { maxPendingCalls: 500 } },
  });
  expect(bad.status()).toBe(400);
  const badBody = await bad.json();
  expect(badBody.error.message).toContain("codeMode.maxPendingCalls");
  expect(badBody.error.details.fields[0].field).toBe("codeMode.maxPendingCalls");
  expect((await settings(request)).version).toBe(after.version);

  const notJson = await request.fetch("/v1/platform/settings", {
    method: "PATCH",
    headers: { ...admin, "content-type": "application/json" },
    data: "{oops",
  });
  expect(notJson.status()).toBe(400);
});

test("people and keys: a member without platform.admin gets 403 on settings", async ({ request }) => {
  const user = await request.post("/v1/users", { headers: admin, data: { name: "Member", role: "member" } });
  expect(user.status()).toBe(201);
  const { id } = await user.json();
  const badKey = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: id, name: "k", permissions: ["root"] },
  });
  expect(badKey.status()).toBe(400);
  expect((await badKey.json()).error.message).toContain("permissions");
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: id, name: "member key", permissions: ["apps.use", "sessions.read", "sessions.write"] },
  });
  expect(key.status()).toBe(201);
  const { token } = await key.json();
  const member = { Authorization: `Bearer ${token}` };
  expect((await request.get("/v1/platform/settings", { headers: member })).status()).toBe(403);
  expect(
    (await request.patch("/v1/platform/settings", { headers: member, data: { expectedVersion: 1 } })).status(),
  ).toBe(403);
  expect((await request.post("/v1/users", { headers: member, data: { name: "x", role: "admin" } })).status()).toBe(403);
});

test("chats and a server-side run: POST /v1/chats/:id/code-runs answers with the record", async ({ request }) => {
  const s = await settings(request);
  await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: s.version, codeMode: { enabled: true } },
  });

  expect((await request.post("/v1/chats", { data: { title: "x" } })).status()).toBe(401);
  const chatResponse = await request.post("/v1/chats", { headers: admin, data: { title: "Calendar" } });
  expect(chatResponse.status()).toBe(201);
  const chat = await chatResponse.json();

  const missing = await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { reason: "no code" } });
  expect(missing.status()).toBe(400);
  expect((await missing.json()).error.message).toContain("code");

  const runResponse = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: admin,
    data: { code: CALENDAR_PROGRAM, reason: "Busy meetings over two days" },
  });
  expect(runResponse.status()).toBe(200);
  const record = await runResponse.json();
  expect(record).toMatchObject({
    chat: chat.id,
    session: chat.id,
    status: "Completed",
    reason: "Busy meetings over two days",
    code: CALENDAR_PROGRAM,
  });
  expect(typeof record.id).toBe("string");
  expect(typeof record.executionId).toBe("string");
  expect(record.calls.map((c: { binding: string }) => c.binding)).toEqual([
    "work_calendar.list_events",
    "work_calendar.list_events",
  ]);
  expect(record.calls[0].app.status).toBe("Completed");
  expect(record.calls[0].app.result.structuredContent.events.length).toBeGreaterThan(0);
  expect(record.result._tag).toBe("Completed");
  expect(record.result.value.length).toBeGreaterThan(0);
  expect(record.result.logs[0].text).toMatch(/^events \d+$/);
  expect(typeof record.createdAt).toBe("number");

  const byId = await request.get(`/v1/code-runs/${record.id}`, { headers: admin });
  expect(byId.status()).toBe(200);
  expect(await byId.json()).toEqual(record);
  const list = await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json();
  expect(list).toEqual([record]);
  const alias = await (await request.get(`/v1/sessions/${chat.id}/code-runs`, { headers: admin })).json();
  expect(alias).toEqual([record]);
  expect((await request.get(`/v1/code-runs/run_nope`, { headers: admin })).status()).toBe(404);
});

test("Idempotency-Key: a retried POST /v1/chats/:id/code-runs returns the first run, never a second", async ({
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "idempotent" } })).json();
  const key = { ...admin, "idempotency-key": `retry-${Date.now()}` };
  const data = { code: "console.log('once'); return 40 + 2", reason: "idempotent start" };
  // Sent twice at once and once more after: one run.
  const [a, b] = await Promise.all([
    request.post(`/v1/chats/${chat.id}/code-runs`, { headers: key, data }),
    request.post(`/v1/chats/${chat.id}/code-runs`, { headers: key, data }),
  ]);
  const c = await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: key, data });
  const ids = await Promise.all([a, b, c].map(async (r) => ((await r.json()) as { id: string }).id));
  expect([a.status(), b.status(), c.status()].every((s) => s === 200)).toBe(true);
  expect(new Set(ids).size).toBe(1);
  const list = (await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json()) as unknown[];
  expect(list).toHaveLength(1);
  const again = await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: key, data });
  expect(((await again.json()) as { result: { value: unknown } }).result.value).toBe(42);
  // The same key for another program is a conflict, not a second run; a bad key is named.
  const other = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: key,
    data: { ...data, code: "return 1" },
  });
  expect(other.status()).toBe(409);
  expect(((await other.json()) as { error: { message: string } }).error.message).toContain("different request");
  const bad = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: { ...admin, "idempotency-key": "" },
    data,
  });
  expect(bad.status()).toBe(400);
  // Without a key every POST is a new run.
  await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data });
  expect(
    ((await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json()) as unknown[]).length,
  ).toBe(2);
});
