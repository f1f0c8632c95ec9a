/**
 * Every page in light, dark and at 390 px: an axe-core check with no serious or critical violation, a
 * title of its own, a favicon, and a screenshot under test-results/screenshots. On a phone the chat
 * list is a drawer, so the conversation comes first.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page, test } from "@playwright/test";
import { STUB_URL } from "../../playwright.config";
import { admin, CALENDAR_PROGRAM, patchSettings, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

let chatId = "";

test.beforeAll(async ({ request }) => {
  await patchSettings(request, {
    codeMode: { enabled: true },
    model: { provider: "openai-compatible", baseURL: STUB_URL, model: "stub-1", apiKey: "sk-e2e" },
  });
  const chat = await (
    await request.post("/v1/chats", { headers: admin, data: { title: "Busy meetings this week" } })
  ).json();
  chatId = chat.id;
  expect(
    (
      await request.post(`/v1/chats/${chatId}/turns`, {
        headers: admin,
        data: { message: "Answer in markdown please" },
      })
    ).status(),
  ).toBe(200);
  expect(
    (
      await request.post(`/v1/chats/${chatId}/turns`, {
        headers: admin,
        data: { message: "Which calendar meetings are busy?" },
      })
    ).status(),
  ).toBe(200);
  expect(
    (
      await request.post(`/v1/chats/${chatId}/code-runs`, {
        headers: admin,
        data: { code: CALENDAR_PROGRAM, reason: "Busy meetings" },
      })
    ).status(),
  ).toBe(200);
});
test.afterAll(async ({ request }) => {
  await patchSettings(request, { model: null });
});

const PAGES: { name: string; path: () => string; title: RegExp; ready: (page: Page) => Promise<void> }[] = [
  {
    name: "home",
    path: () => "/",
    title: /^Chats · OpenBot$/,
    ready: (p) => expect(p.getByTestId("first-run")).toBeVisible(),
  },
  {
    name: "chat",
    path: () => `/chats/${chatId}`,
    title: /^Busy meetings this week · OpenBot$/,
    ready: (p) => expect(p.getByTestId("markdown").first()).toBeVisible(),
  },
  {
    name: "chat-runs",
    path: () => `/chats/${chatId}/runs`,
    title: /^Code runs · OpenBot$/,
    ready: (p) => expect(p.getByRole("heading", { level: 1 })).toBeVisible(),
  },
  {
    name: "outbox",
    path: () => "/outbox",
    title: /^Sent mail · OpenBot$/,
    ready: (p) => expect(p.getByRole("heading", { level: 1 })).toBeVisible(),
  },
  {
    name: "admin-settings",
    path: () => "/admin/settings",
    title: /^Settings · OpenBot$/,
    ready: (p) => expect(p.getByLabel("Code Mode enabled")).toBeVisible(),
  },
  {
    name: "admin-apps",
    path: () => "/admin/apps",
    title: /^Apps · OpenBot$/,
    ready: (p) => expect(p.getByText("Work calendar").first()).toBeVisible(),
  },
  {
    name: "admin-model",
    path: () => "/admin/model",
    title: /^Model · OpenBot$/,
    ready: (p) => expect(p.getByLabel("Provider")).toBeVisible(),
  },
  {
    name: "admin-keys",
    path: () => "/admin/keys",
    title: /^People and API keys · OpenBot$/,
    ready: (p) => expect(p.getByRole("heading", { level: 1 })).toBeVisible(),
  },
  {
    name: "admin-vault",
    path: () => "/admin/vault",
    title: /^Vault · OpenBot$/,
    ready: (p) => expect(p.getByRole("heading", { level: 1 })).toBeVisible(),
  },
  {
    name: "lab-sandbox",
    path: () => "/lab/sandbox",
    title: /^Sandbox lab · OpenBot$/,
    ready: (p) => expect(p.getByRole("heading", { level: 1 })).toBeVisible(),
  },
];

const VIEWS = [
  { name: "light", theme: "light", width: 1280 },
  { name: "dark", theme: "dark", width: 1280 },
  { name: "390", theme: "light", width: 390 },
] as const;

async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
}

for (const view of VIEWS) {
  test(`every page in ${view.name}: no serious or critical axe violation, its own title, a screenshot`, async ({
    page,
  }) => {
    await page.setViewportSize({ width: view.width, height: 900 });
    await page.goto("/");
    await page.evaluate((theme) => localStorage.setItem("openbot-theme", theme), view.theme);
    await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
    expect(await seriousViolations(page), "sign-in").toEqual([]);
    await page.screenshot({ path: `test-results/screenshots/sign-in-${view.name}.png`, fullPage: true });
    await signIn(page);
    for (const p of PAGES) {
      await page.goto(p.path());
      await p.ready(page);
      await expect(page.locator("html")).toHaveAttribute("data-theme", view.theme);
      await expect(page).toHaveTitle(p.title);
      expect(await seriousViolations(page), p.name).toEqual([]);
      if (view.width < 500) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, p.name).toBeLessThanOrEqual(0);
      }
      await page.screenshot({ path: `test-results/screenshots/${p.name}-${view.name}.png`, fullPage: true });
    }
  });
}

test("a favicon is served", async ({ page, request }) => {
  await page.goto("/");
  const href = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(href).toBeTruthy();
  const icon = await request.get(href!);
  expect(icon.status()).toBe(200);
  expect(icon.headers()["content-type"]).toContain("image/svg+xml");
});

test("on a phone (390 px) the conversation comes first; the chat list is a drawer", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 800 });
  await signIn(page);
  await page.goto(`/chats/${chatId}`);
  const conversation = page.getByRole("region", { name: "Chat" });
  await expect(conversation.getByTestId("markdown").first()).toBeVisible();
  await expect(page.getByRole("complementary", { name: "Chats" })).toBeHidden();
  const top = await conversation.getByRole("heading", { level: 1 }).boundingBox();
  expect(top!.y).toBeLessThan(800);
  // Table cells keep their words whole (the table scrolls sideways instead of breaking "Completed").
  const brokenCells = await page.locator("table.calls th, table.calls td").evaluateAll((cells) =>
    cells
      .filter((cell) => {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const range = document.createRange();
          range.selectNodeContents(node);
          if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) return true;
        }
        return false;
      })
      .map((cell) => cell.textContent),
  );
  expect(brokenCells).toEqual([]);
  await page.getByRole("button", { name: "Chats", exact: true }).click();
  const list = page.getByRole("complementary", { name: "Chats" });
  await expect(list.getByRole("link", { name: "Busy meetings this week" })).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/chat-drawer-390.png", fullPage: true });
  await list.getByRole("link", { name: "Busy meetings this week" }).click();
  await expect(list).toBeHidden();
});
