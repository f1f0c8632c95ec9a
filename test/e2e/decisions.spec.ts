/**
 * One decision card per pause, in Chromium against the built server: a program that sends three mails
 * in Promise.all shows ONE card with three calls; a person denies one call on its own, then allows the
 * rest with "Allow all"; the program runs again once and sends exactly the two allowed mails; the run
 * card says who decided each call. Plus the batch endpoint over HTTP: all or nothing, and who may use it
 * (no key, a stranger, a member without apps.use, a foreign origin with the session cookie).
 */
import { randomUUID } from "node:crypto";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { admin, patchSettings, sentMailCount, sessionCookie, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
});

const THREE_MAILS = `const r = await Promise.allSettled(["one", "two", "three"].map((s) =>
  apps.email.send_email({ to: s + "@example.com", subject: "card " + s, body: "hello" })))
return r.map((x) => x.status === "fulfilled" ? "sent" : x.reason.name)`;

async function waitingRun(request: APIRequestContext, headers: Record<string, string> = admin) {
  const chat = await (await request.post("/v1/chats", { headers, data: { title: "one card" } })).json();
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers,
    data: { code: THREE_MAILS, reason: "Send three mails" },
  });
  expect(run.status()).toBe(200);
  const record = await run.json();
  expect(record.status).toBe("Waiting");
  return { chatId: chat.id as string, record };
}

async function pendingOf(request: APIRequestContext, runId: string, headers = admin) {
  const r = await request.get(`/v1/decisions?runId=${runId}&status=pending`, { headers });
  expect(r.status()).toBe(200);
  return (await r.json()) as { id: string; request: { code: { index: number } } }[];
}

async function keyFor(request: APIRequestContext, permissions: string[]) {
  const user = await (
    await request.post("/v1/users", {
      headers: admin,
      data: { name: `member ${permissions.join("+")} ${randomUUID().slice(0, 6)}`, role: "member" },
    })
  ).json();
  const key = await (
    await request.post("/v1/api-keys", { headers: admin, data: { userId: user.id, name: "cards", permissions } })
  ).json();
  return { Authorization: `Bearer ${key.token}` };
}

test("one card for the pause: deny one call, Allow all the rest, one re-run sends exactly the allowed mails", async ({
  page,
  request,
}) => {
  const before = await sentMailCount(request);
  const { chatId, record } = await waitingRun(request);
  expect(await pendingOf(request, record.id)).toHaveLength(3);
  await signIn(page);
  await page.goto(`/chats/${chatId}`);
  const cards = page.getByTestId("decision-card");
  await expect(cards).toHaveCount(1);
  const card = cards.first();
  await expect(card.getByRole("heading", { name: "3 calls wait for your decision" })).toBeVisible();
  const items = card.getByTestId("decision-item");
  await expect(items).toHaveCount(3);
  await expect(items.nth(1).getByTestId("decision-arguments")).toContainText("two@example.com");

  await items.nth(1).getByRole("button", { name: "Deny this call" }).click();
  await expect(card.getByTestId("decision-item")).toHaveCount(2);
  await expect(card).not.toContainText("two@example.com");
  // Still waiting: the program runs again only once every call of the pause is decided.
  expect((await (await request.get(`/v1/code-runs/${record.id}`, { headers: admin })).json()).status).toBe("Waiting");
  await card.getByRole("button", { name: "Allow all 2" }).click();
  await expect(page.getByTestId("decision-card")).toHaveCount(0);

  const runCard = page.getByTestId("run-card").first();
  await expect(runCard).toHaveAttribute("data-status", "Completed");
  await expect(runCard.getByTestId("run-value")).toContainText("AppCallDenied");
  await expect(runCard.getByTestId("call-decision")).toHaveCount(3);
  for (const cell of await runCard.getByTestId("call-decision").all()) await expect(cell).toContainText(" at ");
  const done = await (await request.get(`/v1/code-runs/${record.id}`, { headers: admin })).json();
  expect(done.result.value).toEqual(["sent", "AppCallDenied", "sent"]);
  expect(done.calls.map((c: { decision: { by: { name: string } } | null }) => c.decision?.by.name)).toEqual([
    expect.any(String),
    expect.any(String),
    expect.any(String),
  ]);
  expect(await sentMailCount(request)).toBe(before + 2);
});

test("a lone waiting call keeps the one-call card: Allow sends it", async ({ page, request }) => {
  const before = await sentMailCount(request);
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "lone" } })).json();
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: admin,
    data: { code: `await apps.email.send_email({ to: "lone@example.com", subject: "lone", body: "x" }); return 1` },
  });
  expect((await run.json()).status).toBe("Waiting");
  await signIn(page);
  await page.goto(`/chats/${chat.id}`);
  const card = page.getByTestId("decision-card");
  await expect(card.getByRole("heading", { name: /Send email · Email/ })).toBeVisible();
  await expect(card.getByTestId("decision-item")).toHaveCount(0);
  await card.getByRole("button", { name: "Allow", exact: true }).click();
  await expect(page.getByTestId("run-card").first()).toHaveAttribute("data-status", "Completed");
  expect(await sentMailCount(request)).toBe(before + 1);
});

test("an argument the tool's schema does not name is flagged on the card and left out of its summary", async ({
  page,
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "undeclared" } })).json();
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: admin,
    data: {
      code: `await apps.email.send_email({ to: "x@example.com", subject: "s", body: "b", cc: "boss@example.com" }); return 1`,
    },
  });
  expect((await run.json()).status).toBe("Waiting");
  const [pending] = (await (
    await request.get(`/v1/decisions?chatId=${chat.id}&status=pending`, { headers: admin })
  ).json()) as { tool: { undeclared: string[] } }[];
  expect(pending!.tool.undeclared).toEqual(["cc"]);
  await signIn(page);
  await page.goto(`/chats/${chat.id}`);
  const card = page.getByTestId("decision-card");
  await expect(card.getByTestId("decision-summary")).toHaveText("Send email to x@example.com — body 'b', subject 's'");
  await expect(card.getByTestId("decision-undeclared")).toHaveText(
    "Not in the tool's schema: cc. The App may ignore it, so do not decide by it.",
  );
  await card.getByRole("button", { name: "Deny", exact: true }).click();
  await expect(page.getByTestId("decision-card")).toHaveCount(0);
});

test("invisible characters and look-alike letters in a call's arguments show as escapes on the card, in its summary and its arguments", async ({
  page,
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "invisible" } })).json();
  // A zero-width space, a tag character (hidden text), a right-to-left override, a Cyrillic "а" inside a
  // Latin word and a bell character, as the program writes them; a word all in Cyrillic stays as it is, and a
  // line break stays white space in the summary.
  const code = String.raw`await apps.email.send_email({ to: "x@example.com", subject: "pay\u200bment \u{E0041}", body: "b\u202ec p\u0430ypal.com Привет\nline2\u0007" }); return 1`;
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code } });
  expect((await run.json()).status).toBe("Waiting");
  await signIn(page);
  await page.goto(`/chats/${chat.id}`);
  const card = page.getByTestId("decision-card");
  await expect(card.getByTestId("decision-summary")).toHaveText(
    String.raw`Send email to x@example.com — subject 'pay\u200bment \u{e0041}', body 'b\u202ec p\u0430ypal.com Привет line2\u0007'`,
  );
  await expect(card.getByTestId("decision-arguments")).toContainText(String.raw`"pay\u200bment \u{e0041}"`);
  await expect(card.getByTestId("decision-arguments")).toContainText(
    String.raw`"b\u202ec p\u0430ypal.com Привет\nline2\u0007"`,
  );
  await card.getByRole("button", { name: "Deny", exact: true }).click();
  await expect(page.getByTestId("decision-card")).toHaveCount(0);
});

test("POST /v1/decisions is all or nothing, and refuses no key, strangers, keys without apps.use and foreign origins", async ({
  page,
  request,
  baseURL,
}) => {
  const before = await sentMailCount(request);
  const { record } = await waitingRun(request);
  const pending = await pendingOf(request, record.id);
  const all = (decision: string) => ({ items: pending.map((d) => ({ id: d.id, decision })) });

  expect((await request.post("/v1/decisions", { data: all("allow") })).status()).toBe(401);
  const stranger = await keyFor(request, ["apps.use", "sessions.read", "sessions.write"]);
  const strangerAnswer = await request.post("/v1/decisions", { headers: stranger, data: all("allow") });
  expect(strangerAnswer.status()).toBe(404);
  const noApps = await keyFor(request, ["sessions.read", "sessions.write"]);
  expect((await request.post("/v1/decisions", { headers: noApps, data: all("allow") })).status()).toBe(403);
  await signIn(page);
  const cookie = await sessionCookie(page.context(), baseURL!);
  const foreign = await request.post("/v1/decisions", {
    headers: { cookie, origin: "http://127.0.0.1:1", "content-type": "application/json" },
    data: all("allow"),
  });
  expect(foreign.status()).toBe(403);

  const bad = await request.post("/v1/decisions", { headers: admin, data: { items: [{ id: pending[0]!.id }] } });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.message).toContain("items.0.decision");

  const first = await request.post(`/v1/decisions/${pending[0]!.id}`, { headers: admin, data: { decision: "deny" } });
  expect(first.status()).toBe(200);
  const conflict = await request.post("/v1/decisions", { headers: admin, data: all("allow") });
  expect(conflict.status()).toBe(409);
  expect(await pendingOf(request, record.id)).toHaveLength(2);

  const rest = pending.slice(1).map((d) => ({ id: d.id, decision: "allow" }));
  const ok = await request.post("/v1/decisions", { headers: admin, data: { items: rest } });
  expect(ok.status()).toBe(200);
  expect(((await ok.json()) as { status: string }[]).map((d) => d.status)).toEqual(["allowed", "allowed"]);
  await expect
    .poll(async () => (await (await request.get(`/v1/code-runs/${record.id}`, { headers: admin })).json()).status)
    .toBe("Completed");
  expect(await sentMailCount(request)).toBe(before + 2);
});
