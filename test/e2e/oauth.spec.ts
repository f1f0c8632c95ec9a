/**
 * OAuth Apps in the browser against the built server and a real local authorization server with the MCP
 * server it protects (test/helpers/oauth-server.mjs): an admin adds a shared OAuth App in Admin → Apps and
 * signs in through the authorization server's redirect; a per-person App's program fails with
 * `auth_required` for someone not signed in, the chat's run card shows Connect, and after connecting the
 * program's call carries that person's own token.
 */
import { expect, test } from "@playwright/test";
import { type OAuthServer, startOAuthServer } from "../helpers/oauth-server.mjs";
import { admin, patchSettings, signIn } from "./helpers";

const OAUTH_PORT = Number(process.env.OPENBOT_E2E_STUB_PORT ?? 3199) - 7;
let server: OAuthServer;

test.beforeAll(async () => {
  server = await startOAuthServer({ port: OAUTH_PORT });
});
test.afterAll(async () => {
  await server?.close();
});

test("an admin connects a shared OAuth App from Admin → Apps", async ({ page }) => {
  server.signInAs("team-account");
  await signIn(page);
  await page.goto("/admin/apps");
  const form = page.getByRole("form", { name: "Add an App" });
  await form.getByLabel("Name").fill("Team Notes");
  await form.getByLabel("Kind").selectOption("http");
  await form.getByLabel("URL").fill(server.url);
  await form.getByLabel("Sign-in").selectOption("shared");
  await form.getByRole("button", { name: "Add App" }).click();
  const card = page.getByRole("region", { name: "App Team Notes" });
  await expect(card.getByTestId("connection-oauth")).toContainText("not signed in");
  await card.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/apps\?oauth=connected/);
  await expect(card.getByText("connected", { exact: true })).toBeVisible();
  await expect(card).toContainText("team_notes.whoami");
  expect(server.log.authorizations.at(-1)).toMatchObject({ user: "team-account" });
  // The page never gets the token.
  const token = server.log.mcpAuth.at(-1)!.replace("Bearer ", "");
  expect(await page.content()).not.toContain(token);
});

test("a per-person OAuth App: a program of someone not signed in fails with auth_required, Connect signs them in", async ({
  page,
  request,
}) => {
  await patchSettings(request, { codeMode: { enabled: true } });
  const added = await request.post("/v1/connections", {
    headers: admin,
    data: { name: "My Notes", transport: { type: "http", url: server.url, oauth: { mode: "person" } } },
  });
  expect(added.status()).toBe(201);
  const { id } = (await added.json()) as { id: string };
  await signIn(page);
  // An admin signs in once so the App's tools are listed.
  await page.goto("/admin/apps");
  server.signInAs("lister");
  await page
    .getByRole("region", { name: "App My Notes" })
    .getByRole("button", { name: "Sign in", exact: true })
    .click();
  await expect(page).toHaveURL(/oauth=connected/);
  await expect(page.getByRole("region", { name: "App My Notes" })).toContainText("my_notes.whoami");

  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "per person" } })).json();
  const code = "return (await apps.my_notes.whoami({})).structuredContent.user";
  const first = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code, reason: "who am I" } })
  ).json();
  expect(first.status).toBe("Failed");
  expect(JSON.stringify(first)).toContain("auth_required");

  await page.goto(`/chats/${chat.id}`);
  const card = page.getByTestId("run-card").last();
  await expect(card.getByTestId("run-failure")).toContainText("AppCallFailed");
  server.signInAs("admin-personal");
  await card.getByRole("button", { name: "Connect My Notes" }).click();
  // Back to the chat the sign-in was started from, not the home page.
  await expect(page).toHaveURL(new RegExp(`/chats/${chat.id}\\?oauth=connected`));
  const status = await (await page.request.get(`/v1/connections/${id}/oauth`)).json();
  expect(status).toMatchObject({ mode: "person", signedIn: true });

  const second = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code, reason: "again" } })
  ).json();
  expect(second.status).toBe("Completed");
  expect(second.result.value).toBe("admin-personal");
});

test("the callback refuses a stranger and an unknown state; the client metadata document is public", async ({
  request,
}) => {
  const stranger = await request.get("/v1/oauth/callback?state=abc&code=def", { maxRedirects: 0 });
  expect(stranger.status()).toBe(401);
  const unknown = await request.get("/v1/oauth/callback?state=abc&code=def", { headers: admin, maxRedirects: 0 });
  expect(unknown.status()).toBe(400);
  expect(await unknown.text()).toContain("not started here");
  const cimd = await request.get("/v1/oauth/client-metadata.json");
  expect(cimd.status()).toBe(200);
  const doc = await cimd.json();
  expect(doc.client_id).toMatch(/\/v1\/oauth\/client-metadata\.json$/);
  expect(doc.redirect_uris[0]).toMatch(/\/v1\/oauth\/callback$/);
});

test("only admins start the shared sign-in; a member starts their own; a foreign origin is refused with the cookie", async ({
  page,
  request,
}) => {
  const added = await request.post("/v1/connections", {
    headers: admin,
    data: { name: "Refusals", transport: { type: "http", url: server.url, oauth: { mode: "person" } } },
  });
  const { id } = (await added.json()) as { id: string };
  const user = await request.post("/v1/users", { headers: admin, data: { name: "oauth member", role: "member" } });
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: ((await user.json()) as { id: string }).id, name: "oauth", permissions: ["apps.use"] },
  });
  const member = { Authorization: `Bearer ${((await key.json()) as { token: string }).token}` };
  const shared = await request.post(`/v1/connections/${id}/oauth`, { headers: member, data: { for: "shared" } });
  expect(shared.status()).toBe(403);
  const own = await request.post(`/v1/connections/${id}/oauth`, { headers: member, data: { for: "me" } });
  expect(own.status()).toBe(200);
  const started = (await own.json()) as { authorizationUrl: string };
  expect(new URL(started.authorizationUrl).searchParams.get("code_challenge_method")).toBe("S256");
  // The member's flow cannot be completed by the admin (another person): the state is bound to its starter.
  const answer = await fetch(started.authorizationUrl, { redirect: "manual" });
  const back = new URL(answer.headers.get("location")!);
  const hijack = await request.get(`/v1/oauth/callback${back.search}`, { headers: admin, maxRedirects: 0 });
  expect(hijack.status()).toBe(400);
  expect(await hijack.text()).toContain("someone else");
  const wrongFor = await request.post(`/v1/connections/${id}/oauth`, { headers: member, data: { for: "everyone" } });
  expect(wrongFor.status()).toBe(400);

  await signIn(page);
  const foreign = await page.request.post(`/v1/connections/${id}/oauth`, {
    headers: { origin: "http://evil.example" },
    data: { for: "me" },
  });
  expect(foreign.status()).toBe(403);
  await request.delete(`/v1/connections/${id}`, { headers: admin });
});
