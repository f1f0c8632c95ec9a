/**
 * Chat with a model (a local OpenAI-compatible stub that streams like the real API): Admin → Model,
 * a whole turn whose openbot_run_code program runs in this page's worker, and the seeds' story
 * "Send the notes to the team" — the run waits, the turn goes on, the decision card shows the
 * arguments, approve, the result arrives in the chat, exactly one mail is sent; deny; cancel.
 */
import { expect, test } from "@playwright/test";
import { STUB_URL } from "../../playwright.config";
import { admin, newChat, patchSettings, sentMailCount, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
});
test.afterAll(async ({ request }) => {
  await patchSettings(request, { model: null });
});

test("Admin → Model: save an OpenAI-compatible endpoint and test the connection", async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Model" }).click();
  await page.getByLabel("Provider").selectOption("openai-compatible");
  await page.getByLabel("Model", { exact: true }).fill("stub-1");
  await page.getByLabel("Base URL").fill(STUB_URL);
  await page.getByLabel("API key", { exact: true }).fill("sk-e2e-secret");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("model-notice")).toContainText("Saved");
  await expect(page.getByText("API key set")).toBeVisible();
  await page.getByRole("button", { name: "Test connection" }).click();
  await expect(page.getByTestId("model-notice")).toContainText("The model answered");
  await page.screenshot({ path: "test-results/screenshots/admin-model.png", fullPage: true });
});

test("a chat turn: the model's program runs in the page's worker and its final answer is shown", async ({ page }) => {
  const appCalls: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes("codeRuns.appCall")) appCalls.push(r.url());
  });
  await signIn(page);
  await newChat(page);
  await expect(page.getByTestId("manual-mode")).toHaveCount(0);
  await page.getByRole("textbox", { name: "Message" }).fill("Which calendar meetings are busy?");
  await page.getByRole("button", { name: "Send" }).click();
  const card = page.getByTestId("run-card").first();
  await expect(card).toHaveAttribute("data-status", "Completed");
  await expect(card.getByTestId("run-calls").locator("tbody tr")).toHaveCount(2);
  await expect(page.getByText(/The busy meetings are: .*Company town hall/)).toBeVisible();
  expect(appCalls.length).toBeGreaterThan(0);
  await page.screenshot({ path: "test-results/screenshots/chat-run-card.png", fullPage: true });
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
});

test("Send the notes to the team: waits, the decision card shows the arguments, approve, one mail is sent", async ({
  page,
  request,
}) => {
  const before = await sentMailCount(request);
  await signIn(page);
  await newChat(page);
  await page.getByRole("textbox", { name: "Message" }).fill("Send the notes to the team");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(page.getByText("The program is waiting for your decision.")).toBeVisible();
  const decision = page.getByTestId("decision-card");
  await expect(decision).toContainText("apps.email.send_email");
  await expect(decision.getByTestId("decision-arguments")).toContainText("team@example.com");
  await expect(decision.getByTestId("decision-arguments")).toContainText("Q4 planning");
  expect(await sentMailCount(request)).toBe(before);
  await page.screenshot({ path: "test-results/screenshots/chat-decision.png", fullPage: true });

  await decision.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByTestId("decision-card")).toHaveCount(0);
  await expect(page.getByTestId("notice").last()).toContainText("finished");
  await expect(page.getByText("The result arrived: all done.")).toBeVisible();
  await expect(page.getByTestId("run-card").first()).toHaveAttribute("data-status", "Completed");
  expect(await sentMailCount(request)).toBe(before + 1);

  await page.getByRole("link", { name: "Sent mail" }).click();
  await expect(page.getByTestId("sent-mail")).toHaveCount(before + 1);
  await expect(page.getByTestId("sent-mail").first()).toContainText("Q4 planning");
});

test("the same with deny: the program catches AppCallDenied and nothing is sent", async ({ page, request }) => {
  const before = await sentMailCount(request);
  await signIn(page);
  await newChat(page);
  await page.getByRole("textbox", { name: "Message" }).fill("Send the notes to the team");
  await page.getByRole("button", { name: "Send" }).click();
  const decision = page.getByTestId("decision-card");
  await expect(decision).toContainText("apps.email.send_email");
  await decision.getByRole("button", { name: "Deny" }).click();
  // The late result is the run card's update (the notice only points at it; its JSON is for the model).
  await expect(page.getByTestId("notice").last()).toContainText("finished after your decision");
  await expect(page.getByTestId("run-card").first().getByTestId("run-value")).toContainText("AppCallDenied");
  expect(await sentMailCount(request)).toBe(before);
});

test("cancel a waiting run: it ends Cancelled and its decision is withdrawn", async ({ page, request }) => {
  const before = await sentMailCount(request);
  await signIn(page);
  const chatId = await newChat(page);
  await page.getByRole("textbox", { name: "Message" }).fill("Send the notes to the team");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(page.getByTestId("decision-card")).toBeVisible();
  await page.getByRole("button", { name: "Cancel run" }).click();
  await expect(page.getByTestId("decision-card")).toHaveCount(0);
  await expect(page.getByTestId("run-card").first()).toHaveAttribute("data-status", "Cancelled");
  const pending = await (await request.get(`/v1/decisions?status=pending&chatId=${chatId}`, { headers: admin })).json();
  expect(pending).toEqual([]);
  expect(await sentMailCount(request)).toBe(before);
});

test("an API turn runs the program on the server and answers with the turn", async ({ request }) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "API turn" } })).json();
  const r = await request.post(`/v1/chats/${chat.id}/turns`, {
    headers: admin,
    data: { message: "Which calendar meetings are busy?" },
  });
  expect(r.status()).toBe(200);
  const turn = await r.json();
  expect(turn.status).toBe("Completed");
  const assistant = turn.messages.filter((m: { role: string }) => m.role === "assistant");
  const call = assistant.flatMap((m: { toolCalls: { toolName: string }[] }) => m.toolCalls)[0];
  expect(call.toolName).toBe("openbot_run_code");
  const tool = turn.messages.find((m: { role: string }) => m.role === "tool");
  expect(tool.toolResults[0].codeRunId).toMatch(/^run_/);
  expect(assistant.at(-1).text).toMatch(/^The busy meetings are: /);
  const run = await (await request.get(`/v1/code-runs/${tool.toolResults[0].codeRunId}`, { headers: admin })).json();
  expect(run.status).toBe("Completed");
  expect(run.turn).toBe(turn.id);
});
