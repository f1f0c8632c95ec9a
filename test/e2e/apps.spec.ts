/**
 * Admin → Apps in the browser: add the `everything` preset (the MCP reference server over stdio), set a
 * tool's policy, and call it from a program in the chat; deny makes the program's call throw
 * AppCallDenied. Screenshots of the admin pages are kept for a look.
 */
import { expect, type Page, test } from "@playwright/test";
import { admin, newChat, patchSettings, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });
test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
});

/** Shows the manual-mode composer if the chat offers it behind a button. */
async function openComposer(page: Page) {
  const write = page.getByRole("button", { name: "Write a program yourself" });
  if (await write.isVisible()) await write.click();
}

/** Runs what the composer holds; the run's card once it has ended. */
async function runComposer(page: Page) {
  await page.getByRole("button", { name: "Run program" }).click();
  const card = page.getByTestId("run-card").last();
  await expect(card).not.toHaveAttribute("data-status", "Running");
  return card;
}

async function runProgram(page: Page, code: string) {
  await newChat(page);
  await openComposer(page);
  await page.getByRole("textbox", { name: "Program" }).fill(code);
  return runComposer(page);
}

test("add the everything preset, allow its echo tool, and call it from a program", async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Apps" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Everything");
  await page.getByLabel("Kind").selectOption("preset");
  await page.getByLabel("Preset").selectOption("everything");
  await page.getByRole("button", { name: "Add App" }).click();
  const app = page.getByRole("region", { name: "App Everything" });
  await expect(app).toContainText("connected", { timeout: 30_000 });
  await expect(app).toContainText("apps.everything.echo");
  await app.getByLabel("Policy of everything.echo").selectOption("allow");
  await expect(app.getByLabel("Policy of everything.echo")).toHaveValue("allow");
  await page.screenshot({ path: "test-results/screenshots/admin-apps.png", fullPage: true });

  const card = await runProgram(
    page,
    `const r = await apps.everything.echo({ message: "hello from QuickJS" })
return r.content[0].text`,
  );
  await expect(card).toHaveAttribute("data-status", "Completed");
  await expect(card.getByTestId("run-value")).toContainText("hello from QuickJS");
  await expect(card.getByTestId("run-calls")).toContainText("apps.everything.echo");
});

test("deny: the tool is gone from the program's apps and nothing is sent", async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Apps" }).click();
  const app = page.getByRole("region", { name: "App Everything" });
  await app.getByLabel("Policy of everything.echo").selectOption("deny");
  await expect(app.getByLabel("Policy of everything.echo")).toHaveValue("deny");
  // A denied tool is absent everywhere (apps, declarations, discovery); a program cannot even name it.
  const card = await runProgram(
    page,
    `const found = await apps.$search("echo", { limit: 50 })
return [typeof apps.everything.echo, found.results.some((r) => r.binding === "everything.echo")].join(" ")`,
  );
  await expect(card.getByTestId("run-value")).toContainText("undefined false");
  await expect(card.getByTestId("run-calls")).not.toContainText("apps.everything.echo");
});

test("Admin → People: add a person, create a key shown once, and it works", async ({ page, request }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · People" }).click();
  await page.getByLabel("Name", { exact: true }).fill("Grace");
  await page.getByRole("button", { name: "Add person" }).click();
  await expect(page.getByRole("table", { name: "People" })).toContainText("Grace");
  await page.getByLabel("Key name").fill("laptop");
  await page.getByRole("button", { name: "Create key" }).click();
  const token = (await page.getByTestId("new-token").locator("code").textContent())!;
  expect(token).toMatch(/^obk_/);
  await page.screenshot({ path: "test-results/screenshots/admin-keys.png", fullPage: true });
  const chats = await request.get("/v1/chats", { headers: { Authorization: `Bearer ${token}` } });
  expect(chats.status()).toBe(200);
  expect((await request.get("/v1/platform/settings", { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(
    403,
  );
});

test("every admin page keeps its layout on a narrow window", async ({ page }) => {
  await signIn(page);
  await page.setViewportSize({ width: 390, height: 800 });
  for (const name of [
    "Admin · Settings",
    "Admin · Apps",
    "Admin · Model",
    "Admin · People",
    "Admin · Vault",
    "Chats",
  ]) {
    await page.getByRole("link", { name }).click();
    await page.waitForLoadState("networkidle");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, name).toBeLessThanOrEqual(0);
  }
});

test("screenshots of the admin settings page on a narrow window and in dark mode", async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Settings" }).click();
  await expect(page.getByLabel("Code Mode enabled")).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/admin-settings.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 800 });
  await page.getByLabel("Theme").selectOption("dark");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: "test-results/screenshots/admin-settings-narrow-dark.png", fullPage: true });
  await page.getByLabel("Theme").selectOption("system");
});

test("a tool's policy goes back to its default from Admin → Apps (and the API takes null)", async ({
  page,
  request,
}) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Apps" }).click();
  const app = page.getByRole("region", { name: "App Everything" });
  const select = app.getByLabel("Policy of everything.echo");
  await select.selectOption("deny");
  await expect(select).toHaveValue("deny");
  await select.selectOption("");
  await expect(select).toHaveValue("");
  await expect(select.locator("option").first()).toHaveText(/^default \((allow|ask|deny)\)$/);
  const headers = admin;
  type Listed = {
    name: string;
    id: string;
    tools: { name: string; policy: string; defaultPolicy: string; overridden: boolean }[];
  };
  const listed = (await (await request.get("/v1/connections", { headers })).json()) as
    | Listed[]
    | { connections: Listed[] };
  const everything = (Array.isArray(listed) ? listed : listed.connections).find((c) => c.name === "Everything")!;
  const echo = everything.tools.find((t) => t.name === "echo")!;
  expect(echo).toMatchObject({ policy: echo.defaultPolicy, overridden: false });
  const patched = await request.patch(`/v1/connections/${everything.id}/policies`, {
    headers,
    data: { echo: "allow" },
  });
  expect(patched.status()).toBe(200);
  const reset = await request.patch(`/v1/connections/${everything.id}/policies`, { headers, data: { echo: null } });
  expect(reset.status()).toBe(200);
  expect(
    ((await reset.json()) as { tools: { name: string; policy: string }[] }).tools.find((t) => t.name === "echo")
      ?.policy,
  ).toBe(echo.defaultPolicy);
  const bad = await request.patch(`/v1/connections/${everything.id}/policies`, { headers, data: { echo: "maybe" } });
  expect(bad.status()).toBe(400);
  expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('"allow", "ask" or "deny"');
  // A name the App does not list (the binding's spelling of a tool) is a 400 naming the tool it meant.
  const typo = await request.patch("/v1/connections/conn_work_calendar/policies", {
    headers,
    data: { list_events: "deny" },
  });
  expect(typo.status()).toBe(400);
  expect(((await typo.json()) as { error: { message: string } }).error.message).toContain(
    'has no tool named "list_events" (the binding work_calendar.list_events is the tool "list-events")',
  );
});

test("what a program hands back with text() and json() shows on its run card, in order, beside its value", async ({
  page,
}) => {
  await signIn(page);
  const card = await runProgram(
    page,
    `text("hello **world**")
json({ kind: "report", count: 3 })
text("second " + "part")
return "v"`,
  );
  await expect(card).toHaveAttribute("data-status", "Completed");
  const output = card.getByTestId("run-output");
  await expect(output.locator("[data-output]")).toHaveCount(3);
  // Text is Markdown (the bold is rendered, not shown as asterisks); JSON is a tree.
  await expect(output.locator("[data-output]").nth(0).locator("strong")).toHaveText("world");
  await expect(output.locator("[data-output]").nth(1)).toContainText("report");
  await expect(output.locator("[data-output]").nth(1)).toHaveAttribute("data-output", "json");
  await expect(output.locator("[data-output]").nth(2)).toContainText("second part");
  await expect(card.getByTestId("run-value")).toContainText("v");
});

test("Cancel run on the card of a program busy in the page stops it there: its log shows live, the composer is free at once", async ({
  page,
  request,
}) => {
  // A 60 s limit: without the page hearing of the cancel, the composer would stay "Running…" far past the
  // expect timeout.
  await patchSettings(request, { codeMode: { timeoutMs: 60_000 } });
  try {
    await signIn(page);
    await newChat(page);
    await openComposer(page);
    await page
      .getByRole("textbox", { name: "Program" })
      .fill(`console.log("spinning"); let n = 0; while (true) { n++ }`);
    await page.getByRole("button", { name: "Run program" }).click();
    const card = page.getByTestId("run-card").last();
    // The line logged before the endless loop is on the card while the program still runs.
    await expect(card).toContainText("spinning");
    await expect(card).toHaveAttribute("data-status", "Running");
    await card.getByRole("button", { name: "Cancel run" }).click();
    await expect(card).toHaveAttribute("data-status", "Cancelled");
    await expect(page.getByRole("button", { name: "Run program" })).toBeEnabled();
  } finally {
    await patchSettings(request, { codeMode: { timeoutMs: 10_000 } });
  }
});

test("the run card says who or what let each call go, that a call waits for a decision, and names a program's error once", async ({
  page,
}) => {
  await signIn(page);
  const failed = await runProgram(
    page,
    `await apps.work_calendar.list_events({ day: "2026-10-23" })
throw new Error("boom")`,
  );
  await expect(failed).toHaveAttribute("data-status", "Failed");
  await expect(failed.getByTestId("run-failure")).toHaveText("Error: boom");
  await expect(failed.getByTestId("call-decision")).toHaveText("the tool's policy");

  const waiting = await runProgram(
    page,
    `return (await apps.email.send_email({ to: "a@example.com", subject: "card", body: "b" })).structuredContent.id`,
  );
  await expect(waiting).toHaveAttribute("data-status", "Waiting");
  await expect(waiting.getByTestId("run-calls")).toContainText("waiting for a decision");
  await expect(waiting.getByTestId("call-decision")).toHaveText("");
});

/** The programs of the drafts the page's IndexedDB holds (app/_lib/drafts.ts). */
const storedDraftsOf = (page: Page) => () =>
  page.evaluate(
    () =>
      new Promise<string[]>((resolve) => {
        const open = indexedDB.open("openbot-drafts");
        open.onerror = () => resolve([]);
        open.onsuccess = () => {
          try {
            const all = open.result.transaction("drafts").objectStore("drafts").getAll();
            all.onsuccess = () => resolve((all.result as { code: string }[]).map((d) => d.code));
            all.onerror = () => resolve([]);
          } catch {
            resolve([]);
          } finally {
            open.result.close();
          }
        };
      }),
  );

test("the program being written survives a reload (its draft is kept in the browser), and signing out clears it", async ({
  page,
}) => {
  const storedDrafts = storedDraftsOf(page);
  await signIn(page);
  await newChat(page);
  await openComposer(page);
  const draft = "return 42 // my unsaved draft";
  await page.getByRole("textbox", { name: "Program" }).fill(draft);
  await page.getByLabel("Reason").fill("keep me");
  await page.getByLabel("Language").selectOption("typescript");
  await expect.poll(storedDrafts).toContain(draft);
  await page.reload();
  await openComposer(page);
  await expect(page.getByRole("textbox", { name: "Program" })).toHaveValue(draft);
  await expect(page.getByLabel("Reason")).toHaveValue("keep me");
  await expect(page.getByLabel("Language")).toHaveValue("typescript");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect.poll(storedDrafts).toEqual([]);
});

/**
 * Makes the page's drafts store (IndexedDB "openbot-drafts") answer `delayMs` late, or never (-1): its
 * open succeeds, but whoever opened it hears of it only then. Opens made after `window.draftsLate = false`
 * are left alone (the test's own reads).
 */
async function draftsAnswerLate(page: Page, delayMs: number) {
  await page.addInitScript((delay: number) => {
    const open = IDBFactory.prototype.open;
    const onsuccess = Object.getOwnPropertyDescriptor(IDBRequest.prototype, "onsuccess")!;
    IDBFactory.prototype.open = function (this: IDBFactory, name: string, version?: number) {
      const request = version === undefined ? open.call(this, name) : open.call(this, name, version);
      if (name !== "openbot-drafts" || (window as { draftsLate?: boolean }).draftsLate === false) return request;
      Object.defineProperty(request, "onsuccess", {
        configurable: true,
        get: () => onsuccess.get!.call(request),
        set: (handler: ((event: Event) => void) | null) =>
          onsuccess.set!.call(
            request,
            handler &&
              ((event: Event) => {
                if (delay >= 0) setTimeout(() => handler.call(request, event), delay);
              }),
          ),
      });
      return request;
    };
  }, delayMs);
}

test("a program typed while the chat's draft is still loading is neither replaced by it nor run as the example", async ({
  page,
}) => {
  // A busy machine's IndexedDB. Found by CI, where a program typed at once was replaced by the example and
  // the example ran in its place.
  await draftsAnswerLate(page, 1500);
  const storedDrafts = storedDraftsOf(page);
  await signIn(page);
  await newChat(page);
  await openComposer(page);
  const typed = "return 6 * 7 // typed at once";
  await page.getByRole("textbox", { name: "Program" }).fill(typed);
  await page.getByLabel("Reason").fill("typed early");
  // Once the draft has loaded, what was typed is what the composer holds and keeps.
  await page.evaluate(() => {
    (window as { draftsLate?: boolean }).draftsLate = false;
  });
  await expect.poll(storedDrafts).toContain(typed);
  await expect(page.getByRole("textbox", { name: "Program" })).toHaveValue(typed);
  await expect(page.getByLabel("Reason")).toHaveValue("typed early");
  const card = await runComposer(page);
  await expect(card).toHaveAttribute("data-status", "Completed");
  await expect(card.getByTestId("run-value")).toContainText("42");
});

test("a drafts store that never answers leaves the composer usable after a few seconds", async ({ page }) => {
  await draftsAnswerLate(page, -1);
  await signIn(page);
  await newChat(page);
  await openComposer(page);
  const program = page.getByRole("textbox", { name: "Program" });
  await expect(program).toBeEditable({ timeout: 10_000 });
  await program.fill("return 5");
  const card = await runComposer(page);
  await expect(card).toHaveAttribute("data-status", "Completed");
  await expect(card.getByTestId("run-value")).toContainText("5");
});

test("every character of a long argument is on the decision card; bidi controls in a value show as escapes; a long title wraps", async ({
  page,
}) => {
  await signIn(page);
  const tail = "&amount=99999&currency=EUR&final=yes";
  const card = await runProgram(
    page,
    `const link = "https://pay.example.com/transfer?to=" + "ACCT".repeat(30) + ${JSON.stringify(tail)}
return await apps.email.send_email({ to: "bob@example.com", subject: "invoice", body: link })`,
  );
  await expect(card).toHaveAttribute("data-status", "Waiting");
  const args = page.getByTestId("decision-card").getByTestId("decision-arguments");
  await expect(args).toContainText(tail);
  // Nothing of it is cut off: the arguments fit their box, and the box fits the card.
  expect(await args.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
  const cardBox = (await page.getByTestId("decision-card").boundingBox())!;
  const argsBox = (await args.boundingBox())!;
  expect(argsBox.x + argsBox.width).toBeLessThanOrEqual(cardBox.x + cardBox.width + 1);
  await page.getByTestId("decision-card").getByRole("button", { name: "Deny", exact: true }).click();
  // Denied and not caught: the program fails with AppCallDenied.
  await expect(card).toHaveAttribute("data-status", "Failed");

  // U+202E would flip the text after it on screen; the card shows it as an escape.
  await page.getByRole("textbox", { name: "Program" }).fill('return "paid \\u202e gpj.exe"');
  const bidi = await runComposer(page);
  await expect(bidi.getByTestId("run-value")).toHaveText('"paid \\u202e gpj.exe"');

  await page.getByRole("button", { name: "Rename" }).click();
  await page.getByRole("textbox", { name: "Chat title" }).fill("Z".repeat(200));
  await page.getByRole("button", { name: "Save title" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Z".repeat(200));
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
});

test("Admin → Apps: Rename says a new name changes the binding, and a refused rename shows on that App's card", async ({
  page,
}) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Apps" }).click();
  const card = page.getByRole("region", { name: "App Work calendar" });
  let asked = "";
  page.once("dialog", (dialog) => {
    asked = dialog.message();
    void dialog.accept("   ");
  });
  await card.getByRole("button", { name: "Rename" }).click();
  await expect(card.getByRole("alert")).toContainText("name must not be empty");
  expect(asked).toContain("apps.work_calendar");
  await expect(card).toContainText("apps.work_calendar");
});

test("Cancel run keeps the log the program wrote until it was stopped", async ({ page }) => {
  await signIn(page);
  await newChat(page);
  await openComposer(page);
  await page.getByRole("textbox", { name: "Program" }).fill(`console.log("step 1 reached")
await apps.work_calendar.list_events({ day: "2026-10-23" })
console.log("step 2 reached")
while (true) {}`);
  await page.getByRole("button", { name: "Run program" }).click();
  const card = page.getByTestId("run-card").last();
  await expect(card).toContainText("step 2 reached");
  await card.getByRole("button", { name: "Cancel run" }).click();
  await expect(card).toHaveAttribute("data-status", "Cancelled");
  await expect(card).toContainText("The program was stopped.");
  // The stopped attempt's report brings its log into the Cancelled record.
  await expect(card).toContainText("step 1 reached");
  await expect(card).toContainText("step 2 reached");
  await page.reload();
  await expect(page.getByTestId("run-card").last()).toContainText("step 2 reached");
});
