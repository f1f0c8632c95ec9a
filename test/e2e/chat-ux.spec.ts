/**
 * The chat as people use it, against the built server and the local stub model: the answer's Markdown
 * rendered (and safe), copy buttons, one turn for a double Enter (and a 409 from the server for a
 * second concurrent turn), Stop keeping the partial answer across a reload, and chat management (rename,
 * pin, search, delete, automatic titles) from the UI and the API with its permission checks.
 */
import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { STUB_URL } from "../../playwright.config";
import { admin, CALENDAR_PROGRAM, newChat, patchSettings, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  await patchSettings(request, {
    codeMode: { enabled: true },
    model: { provider: "openai-compatible", baseURL: STUB_URL, model: "stub-1", apiKey: "sk-e2e" },
  });
});
test.afterAll(async ({ request }) => {
  await patchSettings(request, { model: null });
});

async function send(page: Page, text: string) {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

async function messages(request: APIRequestContext, chatId: string) {
  const r = await request.get(`/v1/chats/${chatId}/messages`, { headers: admin });
  expect(r.status()).toBe(200);
  return (await r.json()) as { role: string; text: string; stopped?: boolean }[];
}

async function memberKeys(request: APIRequestContext) {
  const user = await (
    await request.post("/v1/users", { headers: admin, data: { name: `Member ${Date.now()}`, role: "member" } })
  ).json();
  const key = async (permissions: string[]) => {
    const r = await request.post("/v1/api-keys", {
      headers: admin,
      data: { userId: user.id, name: permissions.join(","), permissions },
    });
    expect(r.status()).toBe(201);
    return { Authorization: `Bearer ${(await r.json()).token}` };
  };
  return { writer: await key(["apps.use", "sessions.read", "sessions.write"]), reader: await key(["sessions.read"]) };
}

test("the answer's Markdown is rendered: headings, a table, a task list, highlighted code with a copy button, a safe link", async ({
  page,
  context,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await signIn(page);
  await newChat(page);
  await send(page, "Answer in markdown please");
  const answer = page.getByTestId("message-assistant").getByTestId("markdown").last();
  await expect(answer.getByRole("heading", { name: "Meeting summary" })).toBeVisible();
  await expect(answer.locator("strong")).toHaveText("what matters");
  const table = answer.getByRole("table");
  await expect(table.getByRole("columnheader")).toHaveText(["Day", "Meetings"]);
  await expect(table.getByRole("row")).toHaveCount(3);
  const tasks = answer.getByRole("checkbox");
  await expect(tasks).toHaveCount(2);
  await expect(tasks.first()).toBeChecked();
  await expect(tasks.last()).not.toBeChecked();
  const code = answer.getByTestId("md-code");
  await expect(code.locator(".hljs-keyword").first()).toHaveText("const");
  await expect(code.locator(".hljs-string").first()).toHaveText('"total"');
  const link = answer.getByRole("link", { name: "the docs" });
  await expect(link).toHaveAttribute("href", "https://example.com/docs");
  await expect(link).toHaveAttribute("target", "_blank");
  await expect(link).toHaveAttribute("rel", /noopener/);
  // Raw HTML in an answer is never rendered as HTML.
  await expect(answer).toContainText("raw html stays text");
  await expect(answer.locator("b")).toHaveCount(0);
  await expect(page.getByText("| Day |")).toHaveCount(0);

  // The turn is over: the composer is ready again (no Stop, no "working" left behind by a fast turn).
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);
  await code.getByRole("button", { name: "Copy code" }).click();
  await expect(code.getByRole("button", { name: "Copy code: copied" })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
    'const total = 3 + 1\nconsole.log("total", total)',
  );
  await page.screenshot({ path: "test-results/screenshots/chat-markdown.png", fullPage: true });
});

test("Enter twice in one moment sends one message and starts one turn", async ({ page, request }) => {
  await signIn(page);
  const chatId = await newChat(page);
  await page.getByRole("textbox", { name: "Message" }).fill("Say hello");
  // Two Enters before React can re-render: the second must not send again.
  await page.getByRole("textbox", { name: "Message" }).evaluate((el) => {
    for (let i = 0; i < 2; i++)
      el.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
  });
  await expect(page.getByText("Hello from the stub model.")).toBeVisible();
  await expect(page.getByTestId("message-user")).toHaveCount(1);
  const stored = await messages(request, chatId);
  expect(stored.filter((m) => m.role === "user")).toHaveLength(1);
  expect(stored.filter((m) => m.role === "assistant")).toHaveLength(1);
});

test("the server refuses a second turn while one runs in the chat: 409 with a message, REST and tRPC", async ({
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: {} })).json();
  const first = request.post(`/v1/chats/${chat.id}/turns`, {
    headers: admin,
    data: { message: "Please answer slowly" },
  });
  await expect.poll(async () => (await messages(request, chat.id)).length).toBeGreaterThan(0);
  const second = await request.post(`/v1/chats/${chat.id}/turns`, {
    headers: admin,
    data: { message: "And another thing" },
  });
  expect(second.status()).toBe(409);
  expect((await second.json()).error).toMatchObject({
    code: "CONFLICT",
    message: expect.stringContaining("still answering"),
  });
  const viaTrpc = await request.post("/api/trpc/turns.send", {
    headers: admin,
    data: { chatId: chat.id, message: "And another thing" },
  });
  expect(viaTrpc.status()).toBe(409);
  expect(JSON.stringify(await viaTrpc.json())).toContain("still answering");
  // Deleting the chat stops the running turn; the first request then ends.
  expect((await request.delete(`/v1/chats/${chat.id}`, { headers: admin })).status()).toBe(200);
  expect([200, 404]).toContain((await first).status());
  expect((await messages(request, chat.id).catch(() => null)) === null).toBe(true);
});

test("Stop keeps what streamed, marked stopped, on screen and after a reload", async ({ page, request }) => {
  await signIn(page);
  const chatId = await newChat(page);
  await send(page, "Please answer slowly");
  await expect(page.getByTestId("assistant-streaming")).toContainText("word3");
  await page.getByRole("button", { name: "Stop" }).click();
  const stopped = page.locator('[data-stopped="true"]');
  await expect(stopped).toContainText("word1 word2 word3");
  await expect(stopped.getByTestId("stopped-mark")).toBeVisible();
  await expect(page.getByTestId("turn-status")).toHaveText("Stopped.");
  await page.reload();
  await expect(page.locator('[data-stopped="true"]')).toContainText("word1 word2 word3");
  await expect(page.getByTestId("stopped-mark")).toBeVisible();
  const stored = (await messages(request, chatId)).filter((m) => m.role === "assistant");
  expect(stored).toHaveLength(1);
  expect(stored[0]!.stopped).toBe(true);
  expect(stored[0]!.text).toMatch(/^word1 word2 word3 /);
  expect(stored[0]!.text).not.toContain("word80");
  // The chat takes the next message after a stop.
  await send(page, "Say hello");
  await expect(page.getByText("Hello from the stub model.")).toBeVisible();
});

test("chat management from the UI: automatic title, rename, pin, search, delete", async ({ page }) => {
  await signIn(page);
  const chatId = await newChat(page);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("New chat");
  await send(page, "Say hello");
  await expect(page.getByText("Hello from the stub model.")).toBeVisible();
  // The model writes the title (the stub answers "Stub title: weekly plan").
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Stub title: weekly plan");
  const list = page.getByRole("complementary", { name: "Chats" });
  await expect(list.getByRole("link", { name: "Stub title: weekly plan" }).first()).toBeVisible();

  await page.getByRole("button", { name: "Rename" }).click();
  await page.getByRole("textbox", { name: "Chat title" }).fill("Quarterly plan");
  await page.getByRole("button", { name: "Save title" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Quarterly plan");
  await expect(list.getByRole("link", { name: "Quarterly plan" })).toBeVisible();

  await page.getByRole("button", { name: "Pin" }).click();
  await expect(page.getByRole("button", { name: "Unpin" })).toBeVisible();
  await expect(list.getByRole("heading", { name: "Pinned" })).toBeVisible();
  await expect(list.locator(".chat-list").first().getByRole("link")).toHaveText([/Quarterly plan/]);

  await list.getByRole("searchbox", { name: "Search chats" }).fill("quarterly");
  await expect(list.getByRole("link")).toHaveCount(1);
  await list.getByRole("searchbox", { name: "Search chats" }).fill("no chat is called this");
  await expect(list.getByText("No chat matches.")).toBeVisible();
  await list.getByRole("searchbox", { name: "Search chats" }).fill("");
  await page.screenshot({ path: "test-results/screenshots/chat-list.png", fullPage: true });

  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await page
    .getByRole("alertdialog", { name: "Delete this chat?" })
    .getByRole("button", { name: "Delete chat" })
    .click();
  await expect(page).toHaveURL(/\/$/);
  await expect(list.getByRole("link", { name: "Quarterly plan" })).toHaveCount(0);
  await page.goto(`/chats/${chatId}`);
  await expect(page.getByText("No such chat.")).toBeVisible();
});

test("chat management over REST: PATCH and DELETE /v1/chats/:id with their checks; delete takes runs, messages and decisions", async ({
  request,
}) => {
  const { writer, reader } = await memberKeys(request);
  const mine = await (await request.post("/v1/chats", { headers: writer, data: { title: "Member chat" } })).json();
  const theirs = await (await request.post("/v1/chats", { headers: admin, data: { title: "Admin chat" } })).json();

  // A stranger, a member without sessions.write, and a member who does not own the chat are refused.
  expect((await request.patch(`/v1/chats/${mine.id}`, { data: { title: "x" } })).status()).toBe(401);
  expect((await request.delete(`/v1/chats/${mine.id}`)).status()).toBe(401);
  expect((await request.patch(`/v1/chats/${mine.id}`, { headers: reader, data: { title: "x" } })).status()).toBe(403);
  expect((await request.delete(`/v1/chats/${mine.id}`, { headers: reader })).status()).toBe(403);
  expect((await request.patch(`/v1/chats/${theirs.id}`, { headers: writer, data: { title: "x" } })).status()).toBe(404);
  expect((await request.delete(`/v1/chats/${theirs.id}`, { headers: writer })).status()).toBe(404);
  expect((await request.get(`/v1/chats/${theirs.id}`, { headers: admin })).status()).toBe(200);

  const empty = await request.patch(`/v1/chats/${mine.id}`, { headers: writer, data: { title: "  " } });
  expect(empty.status()).toBe(400);
  expect((await empty.json()).error.message).toContain("title");
  const unknown = await request.patch(`/v1/chats/${mine.id}`, { headers: writer, data: { colour: "red" } });
  expect(unknown.status()).toBe(400);
  expect((await unknown.json()).error.message).toContain("colour");

  const renamed = await request.patch(`/v1/chats/${mine.id}`, {
    headers: writer,
    data: { title: "Renamed by its owner", pinned: true },
  });
  expect(renamed.status()).toBe(200);
  expect(await renamed.json()).toMatchObject({ id: mine.id, title: "Renamed by its owner", pinned: true });
  const found = await (
    await request.get(`/v1/chats?query=${encodeURIComponent("renamed BY")}`, { headers: writer })
  ).json();
  expect(found.map((c: { id: string }) => c.id)).toEqual([mine.id]);
  const all = await (await request.get("/v1/chats", { headers: admin })).json();
  expect(all[0].id).toBe(mine.id);
  expect(
    (
      await request.patch(`/v1/chats/${theirs.id}`, { headers: admin, data: { title: "Admins may rename any chat" } })
    ).status(),
  ).toBe(200);

  // A chat with a finished run, a turn with messages, and a run waiting on a decision.
  const run = await (
    await request.post(`/v1/chats/${mine.id}/code-runs`, {
      headers: writer,
      data: { code: CALENDAR_PROGRAM, reason: "busy" },
    })
  ).json();
  expect(run.status).toBe("Completed");
  const turn = await request.post(`/v1/chats/${theirs.id}/turns`, {
    headers: admin,
    data: { message: "Send the notes to the team" },
  });
  expect(turn.status()).toBe(200);
  const pending = await (
    await request.get(`/v1/decisions?status=pending&chatId=${theirs.id}`, { headers: admin })
  ).json();
  expect(pending).toHaveLength(1);
  const waitingRun = pending[0].request.code.run as string;

  expect((await request.delete(`/v1/chats/${mine.id}`, { headers: writer })).status()).toBe(200);
  expect((await request.get(`/v1/chats/${mine.id}`, { headers: writer })).status()).toBe(404);
  expect((await request.get(`/v1/code-runs/${run.id}`, { headers: admin })).status()).toBe(404);

  expect((await request.delete(`/v1/chats/${theirs.id}`, { headers: admin })).status()).toBe(200);
  expect((await request.get(`/v1/chats/${theirs.id}/messages`, { headers: admin })).status()).toBe(404);
  expect((await request.get(`/v1/code-runs/${waitingRun}`, { headers: admin })).status()).toBe(404);
  expect(
    await (await request.get(`/v1/decisions?status=pending&chatId=${theirs.id}`, { headers: admin })).json(),
  ).toEqual([]);
  expect((await request.delete(`/v1/chats/${theirs.id}`, { headers: admin })).status()).toBe(404);
});

test("first run: the home page's checklist for admins, links from manual mode and from Unavailable to the settings, suggested tasks", async ({
  page,
  request,
}) => {
  await patchSettings(request, { codeMode: { enabled: false }, model: null });
  try {
    await signIn(page);
    const checklist = page.getByTestId("first-run");
    await expect(checklist.getByRole("heading", { name: "Get OpenBot ready" })).toBeVisible();
    await expect(checklist.locator('li[data-done="false"]')).toHaveCount(2);
    await expect(checklist.locator('li[data-done="true"]')).toContainText("Review your Apps");
    await page.screenshot({ path: "test-results/screenshots/home-first-run.png", fullPage: true });
    await checklist.getByRole("link", { name: "Open Settings" }).click();
    await expect(page).toHaveURL(/\/admin\/settings$/);

    await newChat(page);
    await expect(page.getByTestId("manual-mode").getByRole("link", { name: "Set a model" })).toHaveAttribute(
      "href",
      "/admin/model",
    );
    await page.getByRole("textbox", { name: "Program" }).fill("return 1");
    await page.getByRole("button", { name: "Run program" }).click();
    const failure = page.getByTestId("run-card").last();
    await expect(failure.getByTestId("run-failure")).toContainText("Unavailable");
    await failure.getByRole("link", { name: "Turn Code Mode on in Settings" }).click();
    await expect(page).toHaveURL(/\/admin\/settings$/);
  } finally {
    await patchSettings(request, {
      codeMode: { enabled: true },
      model: { provider: "openai-compatible", baseURL: STUB_URL, model: "stub-1", apiKey: "sk-e2e" },
    });
  }
  await page.goto("/");
  await expect(page.getByTestId("first-run").getByRole("heading", { name: "OpenBot is ready" })).toBeVisible();
  await expect(page.getByTestId("first-run").locator('li[data-done="false"]')).toHaveCount(0);
  await newChat(page);
  const suggestions = page.getByTestId("suggestions");
  await suggestions.getByRole("button", { name: /Markdown table/ }).click();
  await expect(page.getByRole("textbox", { name: "Message" })).toHaveValue("Summarise my week as a Markdown table");
});

test("the decision card says what the call does, shows the arguments once, takes focus and answers to the D key", async ({
  page,
}) => {
  await signIn(page);
  await newChat(page);
  await send(page, "Send the notes to the team");
  const card = page.getByTestId("decision-card");
  await expect(card).toBeFocused();
  await expect(card.getByRole("heading", { name: /Send email · Email/ })).toBeVisible();
  await expect(card.getByTestId("decision-summary")).toHaveText(
    /^Send email to team@example.com — subject 'Q4 planning', body '/,
  );
  await expect(card).toContainText("Sends an email (to the outbox)");
  await expect(card.getByTestId("decision-annotations")).toHaveText(/Changes data.*Reaches outside OpenBot/);
  await expect(card.getByTestId("decision-annotations")).not.toContainText("May delete");
  await expect(card.getByTestId("decision-program-line")).toContainText("3 const sent = await apps.email.send_email(");
  await expect(card).toContainText("call 2 of run");
  await expect(page.getByTestId("run-card").first().getByTestId("run-duration")).toHaveText(
    /^waiting \d+(\.\d)? (ms|s)$/,
  );
  await expect(card.getByTestId("decision-arguments")).toContainText("team@example.com");
  await page.screenshot({ path: "test-results/screenshots/chat-decision-card.png", fullPage: true });
  await page.keyboard.press("d");
  await expect(page.getByTestId("decision-card")).toHaveCount(0);
  await expect(page.getByTestId("run-card").first()).toHaveAttribute("data-status", "Completed");
  await expect(page.getByTestId("run-card").first().getByTestId("run-value")).toContainText("AppCallDenied");
});

test("a run card scales: capped log with show all, copy buttons, duration, call rows that open, collapse, the replay note", async ({
  page,
  context,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await signIn(page);
  await newChat(page);
  await page.getByRole("button", { name: "Write a program yourself" }).click();
  const program = [
    'for (let i = 0; i < 30; i++) console.log("line", i)',
    "const started = Date.now()",
    'const day = await apps.work_calendar.list_events({ day: "2026-10-23" })',
    "return { count: day.structuredContent.events.length, started }",
  ].join("\n");
  await page.getByRole("textbox", { name: "Program" }).fill(program);
  await page.getByRole("button", { name: "Run program" }).click();
  const card = page.getByTestId("run-card").last();
  await expect(card).toHaveAttribute("data-status", "Completed");
  await expect(card.getByTestId("run-duration")).toHaveText(/^took \d/);
  await expect(card.getByTestId("run-replay-note")).toContainText("fixed for the run");

  const logs = card.getByTestId("run-logs");
  await expect(logs.locator("li")).toHaveCount(30);
  const overflow = () => logs.evaluate((el) => el.scrollHeight > el.clientHeight + 1);
  expect(await overflow()).toBe(true);
  await card.getByRole("button", { name: "Show all 30 lines" }).click();
  expect(await overflow()).toBe(false);
  await card.getByRole("button", { name: "Show fewer lines" }).click();
  expect(await overflow()).toBe(true);

  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  await card.getByRole("button", { name: "Copy log" }).click();
  await expect.poll(clipboard).toMatch(/^line 0\nline 1\n/);
  await card.getByRole("button", { name: "Copy program" }).click();
  await expect.poll(clipboard).toBe(program);
  await card.getByRole("button", { name: "Copy value" }).click();
  await expect.poll(clipboard).toMatch(/"count": \d+/);

  await card.getByRole("button", { name: "Call 1: arguments and result" }).click();
  const detail = card.getByTestId("call-detail");
  await expect(detail).toContainText("2026-10-23");
  await expect(detail).toContainText("structuredContent");
  await card.getByRole("button", { name: "Call 1: arguments and result" }).click();
  await expect(detail).toHaveCount(0);

  await card.getByRole("button", { name: "Collapse" }).click();
  await expect(logs).toBeHidden();
  await card.getByRole("button", { name: "Expand" }).click();
  await expect(logs).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/chat-run-card-scaled.png", fullPage: true });
});

test("a long program shows its first 200 lines on the run card, and all of them on request", async ({ page }) => {
  await signIn(page);
  await newChat(page);
  await page.getByRole("button", { name: "Write a program yourself" }).click();
  const program = [...Array.from({ length: 500 }, (_, i) => `// note ${i}`), "return 7"].join("\n");
  await page.getByRole("textbox", { name: "Program" }).fill(program);
  await page.getByRole("button", { name: "Run program" }).click();
  const card = page.getByTestId("run-card").last();
  await expect(card).toHaveAttribute("data-status", "Completed");
  const code = card.getByTestId("run-code");
  await expect(code).toContainText("// note 199");
  await expect(code).not.toContainText("// note 200");
  await card.getByRole("button", { name: /^Show all 501 lines/ }).click();
  await expect(code).toContainText("// note 499");
  await expect(code).toContainText("return 7");
  await expect(card.getByTestId("run-code-all")).toHaveCount(0);
});

test("after Allow in model mode the late result is the run card's update and the model's follow-up, never raw JSON", async ({
  page,
}) => {
  await signIn(page);
  await newChat(page);
  await send(page, "Send the notes to the team");
  const card = page.getByTestId("decision-card");
  await expect(card).toBeFocused();
  await page.keyboard.press("a");
  await expect(card).toHaveCount(0);
  const run = page.getByTestId("run-card").first();
  await expect(run).toHaveAttribute("data-status", "Completed");
  await expect(run.getByTestId("run-value")).toContainText("sent");
  await expect(page.getByText("The result arrived: all done.")).toBeVisible();
  const notice = page.getByTestId("notice").last();
  await expect(notice).toHaveText(
    "The program “Send the notes to the team” finished after your decision; its card above shows the result.",
  );
  await expect(page.getByText(/"status":|"runId"|\{"/)).toHaveCount(0);
});

test("Admin → Model: Test connection tests the unsaved form, and an empty answer is a warning", async ({
  page,
  request,
}) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Model" }).click();
  await expect(page.getByLabel("Model", { exact: true })).toHaveValue("stub-1");
  await page.getByLabel("Model", { exact: true }).fill("stub-empty");
  await page.getByRole("button", { name: "Test connection" }).click();
  const notice = page.getByTestId("model-notice");
  await expect(notice).toHaveAttribute("data-level", "warning");
  await expect(notice).toContainText("no text");
  await page.getByLabel("Base URL").fill("http://127.0.0.1:3159/v1");
  await page.getByLabel("Model", { exact: true }).fill("stub-1");
  await page.getByRole("button", { name: "Test connection" }).click();
  await expect(notice).toHaveAttribute("data-level", "error");
  await page.getByLabel("Base URL").fill(STUB_URL);
  await page.getByRole("button", { name: "Test connection" }).click();
  await expect(notice).toHaveAttribute("data-level", "ok");
  await expect(notice).toContainText('The model answered: "OK"');
  // Nothing was saved by testing.
  const saved = await (await request.get("/v1/platform/settings", { headers: admin })).json();
  expect(saved.model).toMatchObject({ model: "stub-1", baseURL: STUB_URL });

  const { writer } = await memberKeys(request);
  const form = { provider: "openai-compatible", baseURL: STUB_URL, model: "stub-empty" };
  expect((await request.post("/v1/platform/model-test", { data: form })).status()).toBe(401);
  expect((await request.post("/v1/platform/model-test", { headers: writer, data: form })).status()).toBe(403);
  const r = await request.post("/v1/platform/model-test", { headers: admin, data: form });
  expect(await r.json()).toMatchObject({ ok: false, warning: true });
  const bad = await request.post("/v1/platform/model-test", {
    headers: admin,
    data: { provider: "openai-compatible", model: "" },
  });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.message).toContain("model.model");
});

test("Add App: a preset needs no name of its own", async ({ page, request }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Apps" }).click();
  const form = page.getByRole("form", { name: "Add an App" });
  await form.getByLabel("Preset").selectOption("memory");
  await expect(form.getByLabel("Name")).toHaveAttribute("placeholder", "Memory");
  await form.getByRole("button", { name: "Add App" }).click();
  const app = page.getByRole("region", { name: "App Memory" });
  await expect(app).toBeVisible();
  const connections = (await (await request.get("/v1/connections", { headers: admin })).json()) as {
    id: string;
    name: string;
  }[];
  const memory = connections.find((c) => c.name === "Memory");
  expect(memory).toBeTruthy();
  expect((await request.delete(`/v1/connections/${memory!.id}`, { headers: admin })).status()).toBe(200);
});

test("Add App: arguments one per line keep their spaces; environment and headers go as lines; a bad line is named", async ({
  page,
  request,
}) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Apps" }).click();
  const form = page.getByRole("form", { name: "Add an App" });
  const added: string[] = [];
  try {
    await form.getByLabel("Kind").selectOption("stdio");
    await form.getByLabel("Name").fill("Spaced args");
    await form.getByLabel("Command").fill("/bin/true");
    await form.getByLabel("Arguments").fill("--title\nMy Calendar\n");
    await form.getByLabel("Environment").fill("NOVALUE");
    await expect(form.getByRole("alert")).toHaveText('Environment: line 1 ("NOVALUE") is not NAME=value');
    await expect(form.getByRole("button", { name: "Add App" })).toBeDisabled();
    await form.getByLabel("Environment").fill("API_TOKEN=s3cret value=with equals\n\nREGION=eu");
    await form.getByRole("button", { name: "Add App" }).click();
    await expect(page.getByRole("region", { name: "App Spaced args" })).toBeVisible();

    await form.getByLabel("Kind").selectOption("http");
    await form.getByLabel("Name").fill("Headed");
    await form.getByLabel("URL").fill("http://127.0.0.1:3159/mcp");
    await form.getByLabel("Headers").fill("Authorization: Bearer abc def\nX-Team: blue");
    await form.getByRole("button", { name: "Add App" }).click();
    await expect(page.getByRole("region", { name: "App Headed" })).toBeVisible();

    const list = (await (await request.get("/v1/connections", { headers: admin })).json()) as {
      id: string;
      name: string;
      transport: Record<string, unknown>;
    }[];
    const spaced = list.find((c) => c.name === "Spaced args");
    const headed = list.find((c) => c.name === "Headed");
    added.push(...[spaced?.id, headed?.id].filter((id): id is string => Boolean(id)));
    expect(spaced?.transport).toEqual({
      type: "stdio",
      command: "/bin/true",
      args: ["--title", "My Calendar"],
      env: { API_TOKEN: "••••", REGION: "••••" },
    });
    expect(headed?.transport).toEqual({
      type: "http",
      url: "http://127.0.0.1:3159/mcp",
      headers: { Authorization: "••••", "X-Team": "••••" },
    });
  } finally {
    for (const id of added) await request.delete(`/v1/connections/${id}`, { headers: admin });
  }
});

test("a dead App says what was tried and offers Retry now", async ({ page, request }) => {
  const added = await request.post("/v1/connections", {
    headers: admin,
    data: { name: "Dead app", transport: { type: "http", url: "http://127.0.0.1:3159/mcp" } },
  });
  expect(added.status()).toBeLessThan(300);
  const { id } = await added.json();
  try {
    await signIn(page);
    await page.getByRole("link", { name: "Admin · Apps" }).click();
    const app = page.getByRole("region", { name: "App Dead app" });
    const error = app.getByTestId("connection-error");
    await expect(error).toContainText(
      "Tried to reach the MCP server over Streamable HTTP at http://127.0.0.1:3159/mcp.",
    );
    const updates: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("connections.update")) updates.push(r.postData() ?? "");
    });
    await app.getByRole("button", { name: "Retry now" }).click();
    await expect.poll(() => updates.length).toBe(2);
    expect(updates[0]).toContain('"enabled":false');
    expect(updates[1]).toContain('"enabled":true');
    await expect(app.getByRole("button", { name: "Disable" })).toBeVisible();
    await expect(error).toContainText("Tried to reach");
    await page.screenshot({ path: "test-results/screenshots/admin-apps-dead-app.png", fullPage: true });
  } finally {
    await request.delete(`/v1/connections/${id}`, { headers: admin });
  }
});
