/** Shared steps of the browser stories: page objects kept small and addressed by role, label and test id. */
import { type APIRequestContext, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_TOKEN } from "../../playwright.config";

export const admin = { Authorization: `Bearer ${E2E_ADMIN_TOKEN}` };

export async function signIn(page: Page) {
  await page.goto("/");
  await page.getByLabel("Token").fill(E2E_ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
}

export async function patchSettings(request: APIRequestContext, patch: Record<string, unknown>) {
  const current = await (await request.get("/v1/platform/settings", { headers: admin })).json();
  const r = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: { expectedVersion: current.version, ...patch },
  });
  expect(r.status()).toBe(200);
  return r.json();
}

export async function newChat(page: Page) {
  await page.getByRole("link", { name: "Chats" }).click();
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/chats\/chat_/);
  return page.url().split("/chats/")[1]!;
}

export async function sentMailCount(request: APIRequestContext): Promise<number> {
  const r = await request.get("/api/trpc/connections.emailOutbox", { headers: admin });
  const body = await r.json();
  return body.result.data.emails.length;
}

/** The seeds' calendar program (Promise.all over two days, console.log, filter, titles). */
export const CALENDAR_PROGRAM = `const [today, tomorrow] = await Promise.all([
  apps.work_calendar.list_events({ day: "2026-10-23" }),
  apps.work_calendar.list_events({ day: "2026-10-24" }),
])
const busy = [today, tomorrow].flatMap((result) => result.structuredContent.events)
console.log("events", busy.length)
return busy.filter((event) => event.attendees > 10).map((event) => event.title)`;
