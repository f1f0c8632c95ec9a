/**
 * Remembered grants in the browser against the built server (issue 13, item 2): "Allow for this chat" on
 * the decision card lets the chat's next run go without asking and lists the grant under the chat with
 * Revoke; Admin → Grants lists every grant with who made it and its uses, and revokes. Over HTTP:
 * DELETE /v1/grants/:id by a stranger is a 404, a member asking for "everyone" a 403, and the Apps'
 * untrustedContent flag is set by admins only.
 */
import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { admin, newChat, patchSettings, signIn } from "./helpers";

const NOTE = (title: string) =>
  `return (await apps.notes.write_note({ title: ${JSON.stringify(title)}, body: "from the e2e" })).structuredContent.id`;

test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
});

async function runProgram(page: Page, code: string) {
  const write = page.getByRole("button", { name: "Write a program yourself" });
  if (await write.isVisible()) await write.click();
  await page.getByRole("textbox", { name: "Program" }).fill(code);
  await page.getByRole("button", { name: "Run program" }).click();
}

async function member(request: APIRequestContext, name: string) {
  const user = await request.post("/v1/users", { headers: admin, data: { name, role: "member" } });
  const { id } = (await user.json()) as { id: string };
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: id, name: "grants e2e", permissions: ["apps.use", "sessions.read", "sessions.write"] },
  });
  return { Authorization: `Bearer ${((await key.json()) as { token: string }).token}` };
}

test("remember for the chat: the next run goes without asking; the chat lists the grant; Revoke asks again", async ({
  page,
}) => {
  await signIn(page);
  await newChat(page);
  await runProgram(page, NOTE("first e2e note"));
  const card = page.getByTestId("decision-card");
  await expect(card).toContainText("apps.notes.write_note");
  await card.getByLabel("Remember").selectOption("chat");
  await card.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByTestId("run-card").last()).toHaveAttribute("data-status", "Completed");
  const grants = page.getByTestId("chat-grants");
  await expect(grants.getByTestId("grant-row")).toHaveCount(1);
  await expect(grants).toContainText("apps.notes.write_note");
  await expect(grants).toContainText("this chat");

  await runProgram(page, NOTE("second e2e note"));
  await expect(page.getByTestId("run-card")).toHaveCount(2);
  await expect(page.getByTestId("run-card").last()).toHaveAttribute("data-status", "Completed");
  await expect(page.getByTestId("decision-card")).toHaveCount(0);
  await expect(grants.getByTestId("grant-row")).toContainText("1");
  await page.screenshot({ path: "test-results/screenshots/chat-grants.png", fullPage: true });

  await grants.getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByTestId("chat-grants")).toHaveCount(0);
  await runProgram(page, NOTE("third e2e note"));
  await expect(page.getByTestId("decision-card")).toContainText("apps.notes.write_note");
});

test("Admin → Grants lists grants with their maker and uses, and revokes", async ({ page, request }) => {
  // A grant made over the API: a run, its decision allowed for the chat.
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "grants page" } })).json();
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: admin,
    data: { code: NOTE("grants page note") },
  });
  expect((await run.json()).status).toBe("Waiting");
  const [decision] = await (
    await request.get(`/v1/decisions?status=pending&chatId=${chat.id}`, { headers: admin })
  ).json();
  const decided = await request.post(`/v1/decisions/${decision.id}`, {
    headers: admin,
    data: { decision: "allow", remember: { scope: "chat", match: "arguments" } },
  });
  expect(decided.status()).toBe(200);
  const [grant] = await (await request.get(`/v1/grants?chatId=${chat.id}`, { headers: admin })).json();
  expect(grant).toMatchObject({ scope: "chat", match: "arguments", active: true, chatTitle: "grants page" });

  await signIn(page);
  await page.goto("/admin/grants");
  // The chat is named by its title, a link to it (not its id).
  const row = page.getByTestId("grant-row").filter({ has: page.locator(`a[href="/chats/${chat.id}"]`) });
  await expect(row).toContainText("grants page");
  await expect(row).not.toContainText(chat.id);
  await expect(row).toContainText("apps.notes.write_note");
  await expect(row).toContainText("these arguments only");
  await expect(row).toContainText("Active");
  await page.screenshot({ path: "test-results/screenshots/admin-grants.png", fullPage: true });
  await row.getByRole("button", { name: "Revoke" }).click();
  await expect(row).toContainText("Revoked by");
  const after = await (await request.get(`/v1/grants?chatId=${chat.id}&all=true`, { headers: admin })).json();
  expect(after[0]).toMatchObject({ id: grant.id, active: false });
  expect(after[0].revokedAt).not.toBeNull();
});

test("over HTTP: strangers find no grant, members cannot grant to everyone, only admins mark untrusted content", async ({
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "grant rules" } })).json();
  await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code: NOTE("rules") } });
  const [decision] = await (
    await request.get(`/v1/decisions?status=pending&chatId=${chat.id}`, { headers: admin })
  ).json();
  await request.post(`/v1/decisions/${decision.id}`, {
    headers: admin,
    data: { decision: "allow", remember: { scope: "chat", match: "binding" } },
  });
  const [grant] = await (await request.get(`/v1/grants?chatId=${chat.id}`, { headers: admin })).json();
  const stranger = await member(request, "grant stranger");
  expect((await request.delete(`/v1/grants/${grant.id}`, { headers: stranger })).status()).toBe(404);
  expect((await request.delete(`/v1/grants/${grant.id}`)).status()).toBe(401);
  expect(await (await request.get(`/v1/grants?chatId=${chat.id}`, { headers: stranger })).json()).toEqual([]);

  const mchat = await (await request.post("/v1/chats", { headers: stranger, data: { title: "mine" } })).json();
  await request.post(`/v1/chats/${mchat.id}/code-runs`, { headers: stranger, data: { code: NOTE("member") } });
  const [md] = await (
    await request.get(`/v1/decisions?status=pending&chatId=${mchat.id}`, { headers: stranger })
  ).json();
  const everyone = await request.post(`/v1/decisions/${md.id}`, {
    headers: stranger,
    data: { decision: "allow", remember: { scope: "everyone", match: "binding" } },
  });
  expect(everyone.status()).toBe(403);
  expect((await everyone.json()).error.message).toContain("everyone");

  const flag = await request.patch("/v1/connections/conn_notes", {
    headers: stranger,
    data: { untrustedContent: true },
  });
  expect(flag.status()).toBe(403);
  const set = await request.patch("/v1/connections/conn_notes", { headers: admin, data: { untrustedContent: true } });
  expect(set.status()).toBe(200);
  expect(await set.json()).toMatchObject({ untrustedContent: true, untrustedContentSet: true });
  const back = await request.patch("/v1/connections/conn_notes", { headers: admin, data: { untrustedContent: null } });
  expect(await back.json()).toMatchObject({ untrustedContent: false, untrustedContentSet: null });
  expect((await request.delete(`/v1/grants/${grant.id}`, { headers: admin })).status()).toBe(200);
});
