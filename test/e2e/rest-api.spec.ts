/**
 * The REST routes over real HTTP against the running server: auth, settings (401/403/409/400 and the
 * version), chats, a server-side run of the calendar program in a Node worker thread, and its record.
 */
import { type APIRequestContext, expect, test } from "@playwright/test";
import { STUB_URL } from "../../playwright.config";
import { admin, CALENDAR_PROGRAM, patchSettings } from "./helpers";

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
  // A change (a save that changes nothing keeps the version): another spec may have left 30000.
  const timeoutMs = before.codeMode.timeoutMs === 30000 ? 29000 : 30000;
  const ok = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: {
      expectedVersion: before.version,
      codeMode: { enabled: true, timeoutMs, memoryMb: 64, outputBytes: 65536 },
    },
  });
  expect(ok.status()).toBe(200);
  const after = await ok.json();
  expect(after.version).toBe(before.version + 1);
  expect(after.codeMode).toMatchObject({ enabled: true, timeoutMs });

  const stale = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: before.version, codeMode: { timeoutMs: 20000 } },
  });
  expect(stale.status()).toBe(409);
  const staleBody = await stale.json();
  expect(staleBody.error.details.currentVersion).toBe(after.version);
  expect(staleBody.error.details.current.codeMode.timeoutMs).toBe(timeoutMs);

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

/** A member and a key for them with what a chat's participant holds. */
async function memberHeaders(request: APIRequestContext, name: string) {
  const user = await request.post("/v1/users", { headers: admin, data: { name, role: "member" } });
  expect(user.status()).toBe(201);
  const { id } = await user.json();
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: id, name: `${name} key`, permissions: ["apps.use", "sessions.read", "sessions.write"] },
  });
  expect(key.status()).toBe(201);
  return { id: id as string, headers: { Authorization: `Bearer ${(await key.json()).token}` } };
}

test("cancel of a run: a reader of the shared chat gets 403, a stranger 404, the owner the record", async ({
  request,
}) => {
  await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: (await settings(request)).version, codeMode: { enabled: true } },
  });
  const reader = await memberHeaders(request, "Cancel reader");
  const stranger = await memberHeaders(request, "Cancel stranger");
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "Shared" } })).json();
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code: "return 1" } });
  expect(run.status()).toBe(200);
  const record = await run.json();
  expect(
    (await request.post(`/v1/chats/${chat.id}/shares`, { headers: admin, data: { userId: reader.id } })).status(),
  ).toBe(201);

  expect((await request.get(`/v1/code-runs/${record.id}`, { headers: reader.headers })).status()).toBe(200);
  const refused = await request.post(`/v1/code-runs/${record.id}/cancel`, { headers: reader.headers });
  expect(refused.status()).toBe(403);
  expect((await refused.json()).error.message).toContain("owner or an admin");
  expect((await request.get(`/v1/code-runs/${record.id}`, { headers: stranger.headers })).status()).toBe(404);
  expect((await request.post(`/v1/code-runs/${record.id}/cancel`, { headers: stranger.headers })).status()).toBe(404);
  const own = await request.post(`/v1/code-runs/${record.id}/cancel`, { headers: admin });
  expect(own.status()).toBe(200);
  expect(await own.json()).toMatchObject({ id: record.id, status: "Completed" });
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

test("each domain's REST route and tRPC procedure refuse a bad field with the same schema: 400 naming it", async ({
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "schemas" } })).json();
  const member = await (
    await request.post("/v1/users", { headers: admin, data: { name: "Schema person", role: "member" } })
  ).json();
  const { version } = await settings(request);
  /** `restField`: where the REST body is the procedure's `patch`/`answer`, the field is named inside the body. */
  const cases: { rest: [string, string, unknown]; trpc: [string, unknown]; field: string; restField?: string }[] = [
    {
      rest: ["PATCH", `/v1/chats/${chat.id}`, { pinned: "yes" }],
      trpc: ["chats.update", { id: chat.id, pinned: "yes" }],
      field: "pinned",
    },
    {
      rest: ["POST", "/v1/users", { name: "Owner", role: "owner" }],
      trpc: ["users.create", { name: "Owner", role: "owner" }],
      field: "role",
    },
    {
      rest: ["POST", "/v1/api-keys", { userId: member.id, name: "", permissions: [] }],
      trpc: ["apiKeys.create", { userId: member.id, name: "", permissions: [] }],
      field: "name",
    },
    {
      rest: ["PATCH", "/v1/platform/settings", { expectedVersion: version, codeMode: { timeoutMs: 5 } }],
      trpc: ["settings.update", { expectedVersion: version, codeMode: { timeoutMs: 5 } }],
      field: "codeMode.timeoutMs",
    },
    {
      rest: ["PATCH", "/v1/connections/conn_work_calendar", { enabled: "no" }],
      trpc: ["connections.update", { id: "conn_work_calendar", patch: { enabled: "no" } }],
      field: "patch.enabled",
      restField: "enabled",
    },
    {
      rest: ["POST", "/v1/decisions/dec_none", { decision: "maybe" }],
      trpc: ["decisions.decide", { id: "dec_none", decision: "maybe" }],
      field: "decision",
    },
    {
      rest: ["POST", "/v1/vault", { name: "short/one", secret: "short" }],
      trpc: ["vault.create", { name: "short/one", secret: "short" }],
      field: "secret",
    },
    {
      rest: ["POST", "/v1/app-operations/op_none/input", { action: "maybe" }],
      trpc: ["appOperations.answer", { operationId: "op_none", answer: { action: "maybe" } }],
      field: "answer.action",
      restField: "action",
    },
    {
      rest: ["POST", `/v1/chats/${chat.id}/turns`, { message: "   " }],
      trpc: ["turns.send", { chatId: chat.id, message: "   " }],
      field: "message",
    },
    {
      rest: ["POST", `/v1/chats/${chat.id}/code-runs`, { code: 5 }],
      trpc: ["codeRuns.runOnServer", { chatId: chat.id, code: 5 }],
      field: "code",
    },
  ];
  for (const {
    rest: [method, url, data],
    trpc: [procedure, input],
    field,
    restField = field,
  } of cases) {
    const viaRest = await request.fetch(url, { method, headers: admin, data });
    expect(viaRest.status(), `${method} ${url}`).toBe(400);
    const { error } = await viaRest.json();
    expect(error.message, `${method} ${url}`).toContain(`${restField}:`);
    expect(
      error.details.fields.map((f: { field: string }) => f.field),
      `${method} ${url}`,
    ).toContain(restField);
    const viaTrpc = await request.post(`/api/trpc/${procedure}`, { headers: admin, data: input });
    expect(viaTrpc.status(), procedure).toBe(400);
    const body = await viaTrpc.json();
    expect(body.error.message, procedure).toContain(`${field}:`);
    expect(
      body.error.data.details.fields.map((f: { field: string }) => f.field),
      procedure,
    ).toContain(field);
  }
  const queried = await request.get("/v1/decisions?status=open", { headers: admin });
  expect(queried.status()).toBe(400);
  expect((await queried.json()).error.message).toContain("status:");
  const notObject = await request.post("/v1/decisions/dec_none", { headers: admin, data: ["allow"] });
  expect(notObject.status()).toBe(400);
  expect((await notObject.json()).error.message).toContain("JSON object");
});

test("every chat-scoped route: a stranger is told nothing exists (404); a reader of the shared chat reads but may not act (403)", async ({
  request,
}) => {
  await patchSettings(request, {
    codeMode: { enabled: true },
    model: { provider: "openai-compatible", baseURL: STUB_URL, model: "stub-1", apiKey: "sk-e2e" },
  });
  try {
    await chatRoutes(request);
  } finally {
    await patchSettings(request, { model: null });
  }
});

async function chatRoutes(request: APIRequestContext) {
  const reader = await memberHeaders(request, "Routes reader");
  const stranger = await memberHeaders(request, "Routes stranger");
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "Routes" } })).json();
  const run = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code: "return 1" } })
  ).json();
  const turnAnswer = await request.post(`/v1/chats/${chat.id}/turns`, {
    headers: admin,
    data: { message: "Which calendar meetings are busy?" },
  });
  expect(turnAnswer.status()).toBe(200);
  const turn = await turnAnswer.json();
  expect(
    (await request.post(`/v1/chats/${chat.id}/shares`, { headers: admin, data: { userId: reader.id } })).status(),
  ).toBe(201);

  const routes: { method: "get" | "post" | "patch" | "delete"; url: string; data?: unknown; reader: number }[] = [
    { method: "get", url: `/v1/chats/${chat.id}`, reader: 200 },
    { method: "get", url: `/v1/chats/${chat.id}/messages`, reader: 200 },
    { method: "get", url: `/v1/chats/${chat.id}/code-runs`, reader: 200 },
    { method: "get", url: `/v1/sessions/${chat.id}/code-runs`, reader: 200 },
    { method: "get", url: `/v1/turns/${turn.id}`, reader: 200 },
    { method: "get", url: `/v1/executions/${run.executionId}`, reader: 200 },
    { method: "patch", url: `/v1/chats/${chat.id}`, data: { title: "taken" }, reader: 403 },
    { method: "post", url: `/v1/chats/${chat.id}/code-runs`, data: { code: "return 2" }, reader: 403 },
    { method: "post", url: `/v1/chats/${chat.id}/turns`, data: { message: "hello" }, reader: 403 },
    { method: "post", url: `/v1/chats/${chat.id}/shares`, data: { userId: stranger.id }, reader: 403 },
    { method: "delete", url: `/v1/chats/${chat.id}/shares/${reader.id}`, reader: 403 },
    { method: "post", url: `/v1/turns/${turn.id}/stop`, reader: 403 },
    { method: "post", url: `/v1/executions/${run.executionId}/cancel`, reader: 403 },
    { method: "delete", url: `/v1/chats/${chat.id}`, reader: 403 },
  ];
  const statuses = async (headers: Record<string, string>) => {
    const out: Record<string, number> = {};
    for (const r of routes)
      out[`${r.method.toUpperCase()} ${r.url}`] = (
        await request[r.method](r.url, { headers, ...(r.data ? { data: r.data } : {}) })
      ).status();
    return out;
  };
  const expected = (pick: (r: (typeof routes)[number]) => number) =>
    Object.fromEntries(routes.map((r) => [`${r.method.toUpperCase()} ${r.url}`, pick(r)]));
  expect(await statuses(stranger.headers)).toEqual(expected(() => 404));
  expect(await statuses(reader.headers)).toEqual(expected((r) => r.reader));
  // Nothing they tried took effect: the chat, its title, its runs and its share are as they were.
  const after = await (await request.get(`/v1/chats/${chat.id}`, { headers: admin })).json();
  expect(after.title).toBe("Routes");
  const runs = (await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json()) as unknown[];
  expect(runs.length).toBe(2);
  expect((await request.get(`/v1/chats/${chat.id}`, { headers: reader.headers })).status()).toBe(200);
}
