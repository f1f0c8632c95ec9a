/**
 * The vault in the browser: an admin adds a secret in Admin → Vault; a program passes
 * `vault.github.token` to an App; the decision card shows the reference, never the secret; after
 * Allow the program sees only ⟦hidden:github/token⟧.
 */
import { expect, test } from "@playwright/test";
import { admin, newChat, patchSettings, signIn } from "./helpers";

const SECRET = "ghp_e2eSecret_5d7a0b";

test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
  const connections = (await (await request.get("/v1/connections", { headers: admin })).json()) as {
    id: string;
    name: string;
  }[];
  let everything = connections.find((c) => c.name === "Everything");
  if (!everything) {
    const r = await request.post("/v1/connections", {
      headers: admin,
      data: { name: "Everything", transport: { type: "preset", preset: "everything" } },
    });
    expect(r.status()).toBe(201);
    everything = await r.json();
  }
  const p = await request.patch(`/v1/connections/${everything!.id}/policies`, {
    headers: admin,
    data: { echo: "allow" },
  });
  expect(p.status()).toBe(200);
});

test("a secret is used by reference: the card shows the reference, the program sees it hidden", async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Vault" }).click();
  await page.getByLabel("Name", { exact: true }).fill("github/token");
  await page.getByLabel("Secret", { exact: true }).fill(SECRET);
  await page.getByLabel("Allowed targets").fill("everything/echo");
  await page.getByRole("button", { name: "Add secret" }).click();
  await expect(page.getByTestId("vault-entry")).toContainText("⟦vault:github/token⟧");
  await expect(page.locator("body")).not.toContainText(SECRET);
  await page.screenshot({ path: "test-results/screenshots/admin-vault.png", fullPage: true });

  await newChat(page);
  const write = page.getByRole("button", { name: "Write a program yourself" });
  if (await write.isVisible()) await write.click();
  await page
    .getByRole("textbox", { name: "Program" })
    .fill(`const r = await apps.everything.echo({ message: "auth " + vault.github.token })
return r.content[0].text`);
  await page.getByRole("button", { name: "Run program" }).click();
  const decision = page.getByTestId("decision-card");
  await expect(decision).toContainText("apps.everything.echo");
  await expect(decision.getByTestId("decision-arguments")).toContainText("auth ⟦vault:github/token⟧");
  await expect(page.locator("body")).not.toContainText(SECRET);
  await decision.getByRole("button", { name: "Allow" }).click();
  const card = page.getByTestId("run-card").last();
  await expect(card).toHaveAttribute("data-status", "Completed");
  await expect(card.getByTestId("run-value")).toContainText("auth ⟦hidden:github/token⟧");
  await expect(page.locator("body")).not.toContainText(SECRET);
});

test("on a narrow window each vault entry is a card: its name wraps and its buttons are on screen", async ({
  page,
  request,
}) => {
  const name = "a-very-long-team-name/production-deploy-token";
  const created = await request.post("/v1/vault", { headers: admin, data: { name, secret: "narrow_Secret_0042" } });
  expect(created.status()).toBe(201);
  await signIn(page);
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto("/admin/vault");
  const row = page.getByTestId("vault-entry").filter({ hasText: name });
  const table = page.getByRole("table", { name: "Vault entries" });
  // The column names move from the hidden header onto each cell.
  await expect(table.locator("thead")).toBeHidden();
  const label = await row
    .locator('td[data-label="Allowed targets"]')
    .evaluate((td) => getComputedStyle(td, "::before").content);
  expect(label).toBe('"Allowed targets"');
  expect(await table.evaluate((t) => t.scrollWidth - t.clientWidth)).toBeLessThanOrEqual(0);
  for (const button of ["Rotate", "Delete"]) {
    const box = (await row.getByRole("button", { name: button }).boundingBox())!;
    expect(box.x + box.width, button).toBeLessThanOrEqual(390);
  }
  await page.goto("/admin/keys");
  const keys = page.getByRole("table", { name: "API keys" });
  expect(await keys.evaluate((t) => t.scrollWidth - t.clientWidth)).toBeLessThanOrEqual(0);
  await page.screenshot({ path: "test-results/screenshots/admin-keys-narrow.png", fullPage: true });
  // vault.spec's other test lists its one entry: leave the vault as it was.
  expect((await request.delete(`/v1/vault/${name}`, { headers: admin })).status()).toBe(200);
});
