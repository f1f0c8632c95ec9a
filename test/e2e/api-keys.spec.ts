/**
 * Listing and revoking API keys against the built server: `GET /v1/api-keys` lists every key for an admin
 * and nothing for anyone else; `DELETE /v1/api-keys/:id` revokes a key, after which its token and a page
 * signed in with it get 401; the OPENBOT_ADMIN_TOKEN key is refused. Admin → People shows the table and
 * revokes a key after a confirmation.
 */
import { randomUUID } from "node:crypto";
import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { E2E_ADMIN_TOKEN } from "../../playwright.config";
import { admin, patchSettings, sessionCookie, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

type Permission = "platform.admin" | "apps.use" | "sessions.read" | "sessions.write";

async function personWithKey(request: APIRequestContext, role: "admin" | "member", permissions: Permission[]) {
  const user = await request.post("/v1/users", {
    headers: admin,
    data: { name: `Keys ${role} ${randomUUID().slice(0, 6)}`, role },
  });
  expect(user.status()).toBe(201);
  const { id: userId } = (await user.json()) as { id: string };
  const name = `key ${randomUUID().slice(0, 8)}`;
  const key = await request.post("/v1/api-keys", { headers: admin, data: { userId, name, permissions } });
  expect(key.status()).toBe(201);
  const { id, token } = (await key.json()) as { id: string; token: string };
  return { userId, id, name, token, headers: { Authorization: `Bearer ${token}` } };
}

test("GET /v1/api-keys lists every key for an admin, never a token; a member or a key without platform.admin gets 403 and no data", async ({
  request,
}) => {
  const member = await personWithKey(request, "member", ["apps.use", "sessions.read", "sessions.write"]);
  const listed = await request.get("/v1/api-keys", { headers: admin });
  expect(listed.status()).toBe(200);
  const keys = (await listed.json()) as Record<string, unknown>[];
  expect(keys.find((k) => k.id === member.id)).toEqual({
    id: member.id,
    name: member.name,
    userId: member.userId,
    userName: expect.stringMatching(/^Keys member [0-9a-f]{6}$/),
    role: "member",
    permissions: ["apps.use", "sessions.read", "sessions.write"],
    createdAt: expect.any(Number),
    revokedAt: null,
    fromEnv: false,
  });
  expect(keys.map((k) => k.name)).toContain("OPENBOT_ADMIN_TOKEN");
  const text = JSON.stringify(keys);
  expect(text).not.toContain(member.token);
  expect(text).not.toContain(E2E_ADMIN_TOKEN);

  const scoped = await personWithKey(request, "admin", ["apps.use", "sessions.read", "sessions.write"]);
  for (const [who, headers] of [
    ["member", member.headers],
    ["admin without platform.admin", scoped.headers],
  ] as const) {
    for (const r of [
      await request.get("/v1/api-keys", { headers }),
      await request.get("/api/trpc/apiKeys.list", { headers }),
      await request.delete(`/v1/api-keys/${member.id}`, { headers }),
    ]) {
      expect(`${who} ${r.url()}: ${r.status()}`).toBe(`${who} ${r.url()}: 403`);
      const body = await r.text();
      expect(body).toContain("platform.admin");
      expect(body).not.toContain(member.id);
      expect(body).not.toContain("OPENBOT_ADMIN_TOKEN");
    }
  }
  expect((await request.get("/v1/chats", { headers: member.headers })).status()).toBe(200);
});

test("DELETE /v1/api-keys/:id revokes at once: the token and a page signed in with it get 401; again answers the same", async ({
  request,
  page,
}) => {
  const member = await personWithKey(request, "member", ["apps.use", "sessions.read", "sessions.write"]);
  expect((await request.get("/v1/chats", { headers: member.headers })).status()).toBe(200);
  await page.goto("/");
  await page.getByLabel("Token").fill(member.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  expect((await page.request.get("/v1/chats")).status()).toBe(200);

  const revoked = await request.delete(`/v1/api-keys/${member.id}`, { headers: admin });
  expect(revoked.status()).toBe(200);
  const view = await revoked.json();
  expect(view).toMatchObject({ id: member.id, revokedAt: expect.any(Number) });

  const after = await request.get("/v1/chats", { headers: member.headers });
  expect(after.status()).toBe(401);
  expect((await page.request.get("/v1/chats")).status()).toBe(401);
  await page.reload();
  await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();

  const again = await request.delete(`/v1/api-keys/${member.id}`, { headers: admin });
  expect(again.status()).toBe(200);
  expect(await again.json()).toEqual(view);
  const listed = (await (await request.get("/v1/api-keys", { headers: admin })).json()) as { id: string }[];
  expect(listed.find((k) => k.id === member.id)).toEqual(view);
});

test("DELETE refuses the OPENBOT_ADMIN_TOKEN key (409, naming the variable) and answers 404 for an unknown id", async ({
  request,
}) => {
  const keys = (await (await request.get("/v1/api-keys", { headers: admin })).json()) as {
    id: string;
    name: string;
  }[];
  const fromEnv = keys.find((k) => k.name === "OPENBOT_ADMIN_TOKEN")!;
  expect(keys.filter((k) => (k as { fromEnv?: boolean }).fromEnv)).toEqual([fromEnv]);
  const refused = await request.delete(`/v1/api-keys/${fromEnv.id}`, { headers: admin });
  expect(refused.status()).toBe(409);
  const { error } = await refused.json();
  expect(error).toMatchObject({ code: "CONFLICT", details: { reason: "admin_token_env" } });
  expect(error.message).toContain("Change or unset OPENBOT_ADMIN_TOKEN");
  expect((await request.get("/v1/api-keys", { headers: admin })).status()).toBe(200);

  const missing = await request.delete("/v1/api-keys/key_none", { headers: admin });
  expect(missing.status()).toBe(404);
  expect((await missing.json()).error.message).toBe("No such API key.");
});

/** An admin's session cookie from signing in on `page`, and an origin that is not the app's, to send it from. */
async function adminCookie(page: Page, baseURL: string) {
  await signIn(page);
  return { cookie: await sessionCookie(page.context(), baseURL), foreign: "http://127.0.0.1:1" };
}

function keyRow(page: Page, name: string) {
  return page.getByRole("table", { name: "API keys" }).getByTestId("api-key").filter({ hasText: name });
}

test("Admin → People: a new key shows in the table; Revoke asks first, then marks it revoked; a refusal shows on its row", async ({
  page,
  request,
}) => {
  const person = `Keys UI ${randomUUID().slice(0, 6)}`;
  const keyName = `phone ${randomUUID().slice(0, 6)}`;
  await signIn(page);
  await page.getByRole("link", { name: "Admin · People" }).click();
  await page.getByLabel("Name", { exact: true }).fill(person);
  await page.getByRole("button", { name: "Add person" }).click();
  await expect(page.getByRole("table", { name: "People" })).toContainText(person);
  await page.getByLabel("Key name").fill(keyName);
  await page.getByRole("button", { name: "Create key" }).click();
  const token = (await page.getByTestId("new-token").locator("code").textContent())!;
  expect(token).toMatch(/^obk_/);
  await expect(page.getByTestId("new-token").getByRole("button", { name: "Copy token" })).toBeVisible();
  await expect(page.getByLabel("Key name")).toHaveValue("");

  const row = keyRow(page, keyName);
  await expect(row).toContainText(person);
  await expect(row).toContainText("apps.use, sessions.read, sessions.write");
  await expect(row.getByTestId("api-key-status")).toHaveText("Active");

  // Dismissing the confirmation changes nothing.
  page.once("dialog", (d) => d.dismiss());
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await expect(row.getByTestId("api-key-status")).toHaveText("Active");
  expect((await request.get("/v1/chats", { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(200);

  let asked = "";
  page.once("dialog", (d) => {
    asked = d.message();
    void d.accept();
  });
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await expect(row.getByTestId("api-key-status")).toHaveText(/^Revoked /);
  expect(asked).toContain(keyName);
  await expect(row.getByRole("button", { name: /^Revoke/ })).toHaveCount(0);
  expect((await request.get("/v1/chats", { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(401);

  // The OPENBOT_ADMIN_TOKEN key cannot be revoked while the server is started with it: no button, a note why.
  const envRow = keyRow(page, "OPENBOT_ADMIN_TOKEN");
  await expect(envRow.getByRole("button")).toHaveCount(0);
  await expect(envRow.getByTestId("api-key-from-env")).toHaveText("Set by OPENBOT_ADMIN_TOKEN");
  await expect(envRow.getByTestId("api-key-from-env")).toHaveAttribute("title", /Change or unset it and restart/);
  await expect(envRow.getByTestId("api-key-status")).toHaveText("Active");
  await page.screenshot({ path: "test-results/screenshots/admin-keys-table.png", fullPage: true });
});

test("a double click on a form's submit adds one person, one App and one secret, not two", async ({
  page,
  request,
}) => {
  await signIn(page);
  const person = `Double ${randomUUID().slice(0, 8)}`;
  await page.goto("/admin/keys");
  await page.getByLabel("Name", { exact: true }).fill(person);
  await page.getByRole("button", { name: "Add person" }).dblclick();
  await expect(
    page.getByRole("table", { name: "People" }).getByRole("row", { name: new RegExp(person) }),
  ).toBeVisible();

  const app = `Dbl ${randomUUID().slice(0, 6)}`;
  await page.goto("/admin/apps");
  await page.getByLabel("Name", { exact: true }).fill(app);
  await page.getByLabel("Kind").selectOption("preset");
  await page.getByLabel("Preset").selectOption("memory");
  await page.getByRole("button", { name: "Add App" }).dblclick();
  await expect(page.getByRole("region", { name: `App ${app}` })).toBeVisible({ timeout: 30_000 });

  const secret = `dbl/${randomUUID().slice(0, 6)}`;
  await page.goto("/admin/vault");
  await page.getByLabel("Name", { exact: true }).fill(secret);
  await page.getByLabel("Secret", { exact: true }).fill("dbl_Secret_0042");
  await page.getByRole("button", { name: "Add secret" }).dblclick();
  await expect(page.getByTestId("vault-entry").filter({ hasText: secret })).toHaveCount(1);
  await expect(page.getByRole("form", { name: "Add a secret" }).getByRole("alert")).toHaveCount(0);

  // Settled: whatever a second submit would have sent has arrived by now.
  await page.waitForTimeout(1_000);
  const users = (await (await request.get("/v1/users", { headers: admin })).json()) as { name: string }[];
  expect(users.filter((u) => u.name === person)).toHaveLength(1);
  const apps = (await (await request.get("/v1/connections", { headers: admin })).json()) as { name: string }[];
  expect(apps.filter((c) => c.name === app)).toHaveLength(1);
  const vault = (await (await request.get("/v1/vault", { headers: admin })).json()) as { name: string }[];
  expect(vault.filter((v) => v.name === secret)).toHaveLength(1);
  await page.screenshot({ path: "test-results/screenshots/double-click.png", fullPage: true });
  // Other specs on this server expect their own vault entries and Apps only.
  expect((await request.delete(`/v1/vault/${secret}`, { headers: admin })).status()).toBe(200);
  const added = (await (await request.get("/v1/connections", { headers: admin })).json()) as {
    id: string;
    name: string;
  }[];
  for (const c of added.filter((x) => x.name === app))
    expect((await request.delete(`/v1/connections/${c.id}`, { headers: admin })).status()).toBe(200);
});

test("an admin signed in with a key without platform.admin is told which permission an admin page needs", async ({
  page,
  request,
}) => {
  const reader = await personWithKey(request, "admin", ["sessions.read"]);
  await page.goto("/");
  await page.getByLabel("Token").fill(reader.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  await page.goto("/admin/settings");
  await expect(
    page.getByText(/needs the permission platform\.admin, which the key you signed in with does not hold/),
  ).toBeVisible();
  const member = await personWithKey(request, "member", ["sessions.read"]);
  await page.context().clearCookies();
  await page.goto("/");
  await page.getByLabel("Token").fill(member.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  await page.goto("/admin/settings");
  await expect(page.getByText("This page is for admins.")).toBeVisible();
});

test("another origin cannot list or revoke keys with an admin's session cookie; the app's own origin can", async ({
  page,
  request,
  baseURL,
}) => {
  const { cookie, foreign } = await adminCookie(page, baseURL!);
  const member = await personWithKey(request, "member", ["sessions.read"]);
  const revoke = await request.delete(`/v1/api-keys/${member.id}`, { headers: { cookie, origin: foreign } });
  expect(revoke.status()).toBe(403);
  const trpc = await request.post("/api/trpc/apiKeys.revoke", {
    headers: { cookie, origin: foreign, "content-type": "application/json" },
    data: { id: member.id },
  });
  expect(trpc.status()).toBe(403);
  const list = await request.get("/v1/api-keys", { headers: { cookie, "sec-fetch-site": "cross-site" } });
  expect(list.status()).toBe(403);
  expect(await list.text()).not.toContain(member.id);
  // Nothing was revoked: the key still works.
  expect((await request.get("/v1/chats", { headers: member.headers })).status()).toBe(200);
  const own = await request.delete(`/v1/api-keys/${member.id}`, { headers: { cookie, origin: baseURL! } });
  expect(own.status()).toBe(200);
  expect((await request.get("/v1/chats", { headers: member.headers })).status()).toBe(401);
});

test("PATCH /v1/users/:id changes a role at once; DELETE removes a person: their token and page get 401, their run is cancelled; refusals name why", async ({
  request,
  page,
}) => {
  const person = await personWithKey(request, "admin", [
    "platform.admin",
    "apps.use",
    "sessions.read",
    "sessions.write",
  ]);
  expect((await request.get("/v1/users", { headers: person.headers })).status()).toBe(200);
  const demoted = await request.patch(`/v1/users/${person.userId}`, { headers: admin, data: { role: "member" } });
  expect(demoted.status()).toBe(200);
  expect(await demoted.json()).toMatchObject({ id: person.userId, role: "member", removedAt: null });
  expect((await request.get("/v1/users", { headers: person.headers })).status()).toBe(403);
  const renamed = await request.patch(`/v1/users/${person.userId}`, { headers: admin, data: { name: "New" } });
  expect(renamed.status()).toBe(400);
  expect((await renamed.json()).error.message).toContain('unknown field "name": a person\'s change takes role only');

  // Signed in on a page, with a program of theirs hosted on the server and still running.
  await patchSettings(request, { codeMode: { enabled: true } });
  await page.goto("/");
  await page.getByLabel("Token").fill(person.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  const chat = (await (
    await request.post("/v1/chats", { headers: person.headers, data: { title: "Leaving" } })
  ).json()) as {
    id: string;
  };
  const running = request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: person.headers,
    data: { code: "while (true) {}", reason: "runs until stopped" },
  });
  await expect
    .poll(async () => {
      const runs = (await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json()) as {
        status: string;
      }[];
      return runs.map((r) => r.status);
    })
    .toEqual(["Running"]);

  const removed = await request.delete(`/v1/users/${person.userId}`, { headers: admin });
  expect(removed.status()).toBe(200);
  const view = await removed.json();
  expect(view).toMatchObject({ id: person.userId, removedAt: expect.any(Number) });
  expect((await request.get("/v1/chats", { headers: person.headers })).status()).toBe(401);
  expect((await page.request.get("/v1/chats")).status()).toBe(401);
  const ended = await running;
  expect(await ended.json()).toMatchObject({ status: "Cancelled" });
  const keys = (await (await request.get("/v1/api-keys", { headers: admin })).json()) as {
    id: string;
    revokedAt: number | null;
  }[];
  expect(keys.find((k) => k.id === person.id)?.revokedAt).toEqual(expect.any(Number));
  const again = await request.delete(`/v1/users/${person.userId}`, { headers: admin });
  expect(again.status()).toBe(200);
  expect(await again.json()).toEqual(view);
  const newKey = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: person.userId, name: "back door", permissions: ["sessions.read"] },
  });
  expect(newKey.status()).toBe(400);
  expect((await newKey.json()).error.message).toBe("userId: this person was removed");

  // The OPENBOT_ADMIN_TOKEN holder, an unknown person.
  const users = (await (await request.get("/v1/users", { headers: admin })).json()) as { id: string; name: string }[];
  const keyList = (await (await request.get("/v1/api-keys", { headers: admin })).json()) as {
    userId: string;
    name: string;
  }[];
  const envHolder = keyList.find((k) => k.name === "OPENBOT_ADMIN_TOKEN")!.userId;
  expect(users.some((u) => u.id === envHolder)).toBe(true);
  for (const refused of [
    await request.delete(`/v1/users/${envHolder}`, { headers: admin }),
    await request.patch(`/v1/users/${envHolder}`, { headers: admin, data: { role: "member" } }),
  ]) {
    expect(refused.status()).toBe(409);
    const { error } = await refused.json();
    expect(error.details.reason).toMatch(/^(self|admin_token_env)$/);
  }
  expect((await request.delete("/v1/users/usr_none", { headers: admin })).status()).toBe(404);
});

test("Admin → People: a person's role changes in place and Remove asks first, then marks them removed and their key revoked", async ({
  page,
  request,
}) => {
  const person = `Leaver ${randomUUID().slice(0, 6)}`;
  const user = (await (
    await request.post("/v1/users", { headers: admin, data: { name: person, role: "member" } })
  ).json()) as {
    id: string;
  };
  const keyName = `laptop ${randomUUID().slice(0, 6)}`;
  const { token } = (await (
    await request.post("/v1/api-keys", {
      headers: admin,
      data: { userId: user.id, name: keyName, permissions: ["sessions.read"] },
    })
  ).json()) as { token: string };
  await signIn(page);
  await page.goto("/admin/keys");
  const row = page.getByRole("table", { name: "People" }).getByTestId("person").filter({ hasText: person });
  await expect(row.getByTestId("person-status")).toHaveText("Active");

  let asked = "";
  page.once("dialog", (d) => {
    asked = d.message();
    void d.accept();
  });
  await row.getByLabel(`Role of ${person}`).selectOption("admin");
  await expect(row.getByLabel(`Role of ${person}`)).toHaveValue("admin");
  expect(asked).toContain(`Make ${person} an admin?`);
  const listed = (await (await request.get("/v1/users", { headers: admin })).json()) as { id: string; role: string }[];
  expect(listed.find((u) => u.id === user.id)?.role).toBe("admin");

  // Dismissing the confirmation changes nothing.
  page.once("dialog", (d) => d.dismiss());
  await row.getByRole("button", { name: `Remove ${person}` }).click();
  await expect(row.getByTestId("person-status")).toHaveText("Active");
  expect((await request.get("/v1/chats", { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(200);

  page.once("dialog", (d) => {
    asked = d.message();
    void d.accept();
  });
  await row.getByRole("button", { name: `Remove ${person}` }).click();
  await expect(row.getByTestId("person-status")).toHaveText(/^Removed /);
  expect(asked).toContain("Their keys are revoked");
  await expect(row.getByRole("button", { name: `Remove ${person}` })).toHaveCount(0);
  await expect(keyRow(page, keyName).getByTestId("api-key-status")).toHaveText(/^Revoked /);
  await expect(page.getByLabel("Person").locator("option", { hasText: person })).toHaveCount(0);
  expect((await request.get("/v1/chats", { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(401);

  // The signed-in admin's own row has no actions.
  const people = page.getByRole("table", { name: "People" });
  await expect(people.getByTestId("person").filter({ hasText: "(you)" }).getByRole("button")).toHaveCount(0);
  await page.screenshot({ path: "test-results/screenshots/admin-people.png", fullPage: true });

  // A change the server refuses shows on the person's row: here someone removed since the page was loaded.
  const stale = `Stale ${randomUUID().slice(0, 6)}`;
  const staleUser = (await (
    await request.post("/v1/users", { headers: admin, data: { name: stale, role: "member" } })
  ).json()) as { id: string };
  await page.reload();
  const staleRow = people.getByTestId("person").filter({ hasText: stale });
  await expect(staleRow.getByTestId("person-status")).toHaveText("Active");
  expect((await request.delete(`/v1/users/${staleUser.id}`, { headers: admin })).status()).toBe(200);
  page.once("dialog", (d) => d.accept());
  await staleRow.getByLabel(`Role of ${stale}`).selectOption("admin");
  await expect(people.getByTestId("person-error")).toContainText(`${stale} was removed`);
  await expect(staleRow.getByTestId("person-status")).toHaveText(/^Removed /);
});

test("Admin → People: another admin sees the OPENBOT_ADMIN_TOKEN holder and key without actions", async ({
  page,
  request,
}) => {
  const other = await personWithKey(request, "admin", [
    "platform.admin",
    "apps.use",
    "sessions.read",
    "sessions.write",
  ]);
  await page.goto("/");
  await page.getByLabel("Token").fill(other.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  await page.getByRole("link", { name: "Admin · People" }).click();
  const holder = page
    .getByRole("table", { name: "People" })
    .getByTestId("person")
    .filter({ hasText: "holds OPENBOT_ADMIN_TOKEN" });
  await expect(holder).toHaveCount(1);
  await expect(holder).not.toContainText("(you)");
  await expect(holder.getByRole("button")).toHaveCount(0);
  await expect(holder.getByRole("combobox")).toHaveCount(0);
  await expect(keyRow(page, "Set by OPENBOT_ADMIN_TOKEN").getByRole("button")).toHaveCount(0);
  // Their own row has no actions either.
  await expect(page.getByTestId("person").filter({ hasText: "(you)" }).getByRole("button")).toHaveCount(0);
});

test("another origin cannot change or remove a person with an admin's session cookie; the app's own origin can", async ({
  page,
  request,
  baseURL,
}) => {
  const { cookie, foreign } = await adminCookie(page, baseURL!);
  const person = await personWithKey(request, "member", ["sessions.read"]);
  const json = { cookie, origin: foreign, "content-type": "application/json" };
  const refused = [
    await request.delete(`/v1/users/${person.userId}`, { headers: { cookie, origin: foreign } }),
    await request.patch(`/v1/users/${person.userId}`, { headers: json, data: { role: "admin" } }),
    await request.post("/api/trpc/users.remove", { headers: json, data: { id: person.userId } }),
    await request.post("/api/trpc/users.update", { headers: json, data: { id: person.userId, role: "admin" } }),
  ];
  expect(refused.map((r) => r.status())).toEqual([403, 403, 403, 403]);
  // Nothing changed: still a member, and their key still works.
  const users = (await (await request.get("/v1/users", { headers: admin })).json()) as {
    id: string;
    role: string;
    removedAt: number | null;
  }[];
  expect(users.find((u) => u.id === person.userId)).toMatchObject({ role: "member", removedAt: null });
  expect((await request.get("/v1/chats", { headers: person.headers })).status()).toBe(200);
  const own = await request.delete(`/v1/users/${person.userId}`, { headers: { cookie, origin: baseURL! } });
  expect(own.status()).toBe(200);
  expect((await request.get("/v1/chats", { headers: person.headers })).status()).toBe(401);
});
