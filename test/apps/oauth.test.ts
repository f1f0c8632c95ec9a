/**
 * OAuth for http connections against a real local authorization server and the MCP server it protects
 * (test/helpers/oauth-server.mjs, the SDK's server-side auth helpers over real HTTP): discovery from the
 * 401, registration, PKCE and `resource`, the callback bound to the person who started it, encrypted
 * storage, refresh after the server drops the access token, step-up on insufficient_scope, per-person
 * tokens, and revocation when the connection is removed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oauthSignInSchema } from "@/contracts/oauth";
import { authorizedFetch, followRedirect } from "@/server/apps/oauth/fetch";
import { ConnectionOAuth, SHARED } from "@/server/apps/oauth/manager";
import { memoryStore, OAuthSession } from "@/server/apps/oauth/session";
import { AppRegistry } from "@/server/apps/registry";
import { makeKeyRing } from "@/server/crypto";
import { type Db, openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { type OAuthServer, startOAuthServer } from "../helpers/oauth-server.mjs";
import { entryOf, failure, until } from "./helpers";

const ORIGIN = "http://127.0.0.1:3999";
const KEY = Buffer.alloc(32, 7);
let server: OAuthServer;
let db: Db;
let dataDir: string;
let apps: AppRegistry;
let oauth: ConnectionOAuth;

beforeAll(async () => {
  server = await startOAuthServer();
  db = await openDb({});
  await migrate(db);
  dataDir = mkdtempSync(path.join(tmpdir(), "openbot-oauth-"));
  apps = await startRegistry();
});
afterAll(async () => {
  await apps?.close();
  await db?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await server?.close();
});

/** A registry (as after a restart) with a fresh OAuth manager over the same database and key. */
async function startRegistry(): Promise<AppRegistry> {
  oauth = new ConnectionOAuth({ db, keys: makeKeyRing(KEY) });
  return AppRegistry.start({ db, dataDir, reconnect: { minMs: 100, maxMs: 500 }, oauth });
}

/** What a browser does: open the authorization URL, get redirected back with code, state and iss. */
async function approve(authorizationUrl: string): Promise<URLSearchParams> {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  expect(response.status).toBe(302);
  const back = new URL(response.headers.get("location")!);
  expect(`${back.origin}${back.pathname}`).toBe(`${ORIGIN}/v1/oauth/callback`);
  return back.searchParams;
}

describe("shared sign-in (an admin signs in once)", () => {
  let id: string;
  it("a new OAuth connection waits for a sign-in; the 401 names the metadata and nothing is registered yet", async () => {
    const view = await apps.add({
      name: "Notes OAuth",
      transport: { type: "http", url: server.url, oauth: { mode: "shared" } },
    });
    id = view.id;
    expect(view.status).toBe("failed");
    expect(view.oauth).toEqual({ mode: "shared", needsSignIn: true });
    expect(view.error).toBe("Sign in to this App first.");
    expect(server.log.registrations).toBe(0);
  });

  it("starts with discovery, registration, PKCE S256 and the resource; a stranger cannot complete it", async () => {
    const target = apps.oauthTarget(id)!;
    const started = await oauth.start(target, SHARED, "usr_admin", ORIGIN);
    const url = new URL(started.authorizationUrl!);
    expect(url.origin + url.pathname).toBe(`${new URL(server.issuer).origin}/authorize`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(server.url);
    expect(url.searchParams.get("scope")).toBe("notes:read notes:write");
    expect(server.log.registrations).toBe(1);
    const params = await approve(started.authorizationUrl!);

    const stranger = await oauth.complete("usr_stranger", params, (c) => apps.oauthTarget(c)).catch((e: Error) => e);
    expect(stranger).toMatchObject({ kind: "OAuthFlowError", reason: "state_mismatch" });
    expect(String((stranger as Error).message)).toContain("someone else");
    expect(server.log.tokens).toHaveLength(0);

    const forged = new URLSearchParams(params);
    forged.set("state", "not-the-state");
    await expect(oauth.complete("usr_admin", forged, (c) => apps.oauthTarget(c))).rejects.toMatchObject({
      reason: "state_mismatch",
    });

    const done = await oauth.complete("usr_admin", params, (c) => apps.oauthTarget(c));
    expect(done).toEqual({ connectionId: id, userId: SHARED, returnTo: null });
    expect(server.log.tokens.at(-1)).toMatchObject({ grant: "authorization_code", resource: server.url });
    // A state answers once.
    await expect(oauth.complete("usr_admin", params, (c) => apps.oauthTarget(c))).rejects.toMatchObject({
      reason: "state_mismatch",
    });
  });

  it("connects with the token; the stored credentials are encrypted", async () => {
    await apps.signedInChanged(id, SHARED);
    await until(() => apps.connection(id)?.status === "connected");
    expect(apps.connection(id)?.oauth?.needsSignIn).toBe(false);
    const result = await apps.call(entryOf(apps, "notes_oauth.whoami"), {});
    expect(result.structuredContent).toEqual({ user: "alice" });
    const rows = await db.query<{ data_enc: string }>(
      "select data_enc from oauth_credentials where connection_id = $1",
      [id],
    );
    expect(rows).toHaveLength(1);
    const token = server.log.mcpAuth.at(-1)!.replace("Bearer ", "");
    expect(token).toMatch(/^at_/);
    expect(rows[0]!.data_enc.startsWith("enc1:")).toBe(true);
    expect(rows[0]!.data_enc).not.toContain(token);
    expect(JSON.stringify(apps.connection(id))).not.toContain(token);
  });

  it("refreshes when the server no longer takes the access token", async () => {
    const before = server.log.tokens.length;
    server.expireTokens();
    const result = await apps.call(entryOf(apps, "notes_oauth.whoami"), {});
    expect(result.structuredContent).toEqual({ user: "alice" });
    expect(server.log.tokens.slice(before)).toEqual([{ grant: "refresh_token", resource: server.url, user: "alice" }]);
  });

  it("calls that meet the rejected token together share one refresh (the refresh token is good once)", async () => {
    const before = server.log.tokens.length;
    server.expireTokens();
    const results = await Promise.all(
      Array.from({ length: 3 }, () => apps.call(entryOf(apps, "notes_oauth.whoami"), {})),
    );
    expect(results.map((r) => r.structuredContent)).toEqual(Array.from({ length: 3 }, () => ({ user: "alice" })));
    expect(server.log.tokens.slice(before)).toEqual([{ grant: "refresh_token", resource: server.url, user: "alice" }]);
  });

  it("survives a restart (the sign-in is read back and decrypted)", async () => {
    await apps.close();
    apps = await startRegistry();
    await until(() => apps.connection(id)?.status === "connected");
    expect((await apps.call(entryOf(apps, "notes_oauth.whoami"), {})).structuredContent).toEqual({ user: "alice" });
  });

  it("removing the connection revokes its tokens at the authorization server and forgets them", async () => {
    const live = server.liveTokens();
    expect(live).toBeGreaterThan(0);
    const revokedBefore = server.log.revoked.length;
    await apps.remove(id);
    expect(server.log.revoked.length - revokedBefore).toBe(2);
    expect(server.liveTokens()).toBe(live - 1);
    expect(await db.query("select 1 from oauth_credentials where connection_id = $1", [id])).toHaveLength(0);
  });
});

describe("per-person sign-in", () => {
  let id: string;
  it("each person's calls use their own token; someone not signed in gets auth_required", async () => {
    const view = await apps.add({
      name: "Mine",
      transport: { type: "http", url: server.url, oauth: { mode: "person" } },
    });
    id = view.id;
    const target = apps.oauthTarget(id)!;
    server.signInAs("admin-account");
    const shared = await oauth.start(target, SHARED, "usr_admin", ORIGIN);
    const sharedDone = await oauth.complete("usr_admin", await approve(shared.authorizationUrl!), (c) =>
      apps.oauthTarget(c),
    );
    expect(sharedDone.returnTo).toBeNull();
    await apps.signedInChanged(id, SHARED);
    await until(() => apps.connection(id)?.status === "connected");
    const whoami = entryOf(apps, "mine.whoami");

    const notYet = await failure(apps.call(whoami, {}, { userId: "usr_bob" }));
    expect(notYet.reason).toBe("auth_required");
    expect(notYet.message).toContain("Sign in to Mine");
    expect((await failure(apps.call(whoami, {}))).reason).toBe("auth_required");

    server.signInAs("bob");
    // Started from a chat: the callback sends Bob back there.
    const bobs = await oauth.start(target, "usr_bob", "usr_bob", ORIGIN, "/chats/chat_bob");
    const params = await approve(bobs.authorizationUrl!);
    await expect(oauth.complete("usr_carol", params, (c) => apps.oauthTarget(c))).rejects.toMatchObject({
      reason: "state_mismatch",
    });
    const done = await oauth.complete("usr_bob", params, (c) => apps.oauthTarget(c));
    expect(done).toMatchObject({ userId: "usr_bob", returnTo: "/chats/chat_bob" });
    await apps.signedInChanged(id, "usr_bob");

    expect((await apps.call(whoami, {}, { userId: "usr_bob" })).structuredContent).toEqual({ user: "bob" });
    expect((await failure(apps.call(whoami, {}, { userId: "usr_carol" }))).reason).toBe("auth_required");

    await oauth.signOut(target, "usr_bob");
    await apps.signedInChanged(id, "usr_bob");
    expect((await failure(apps.call(whoami, {}, { userId: "usr_bob" }))).reason).toBe("auth_required");
    await apps.remove(id);
  });
});

describe("the OAuth session without a person (the conformance client's way)", () => {
  it("steps up on insufficient_scope with the union of the granted and the challenged scopes", async () => {
    server.signInAs("alice");
    const session = new OAuthSession({
      serverUrl: server.url,
      store: memoryStore(),
      redirectUrl: `${ORIGIN}/v1/oauth/callback`,
      clientMetadata: { client_name: "OpenBot test", redirect_uris: [`${ORIGIN}/v1/oauth/callback`] },
    });
    const f = authorizedFetch(session, followRedirect());
    const rpc = (method: string, params: unknown) =>
      f(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
    // First sign-in asks only for notes:read (the challenge's scope).
    await session.authorize({ scope: "notes:read" }).then(async (start) => {
      if (start !== "AUTHORIZED") await session.complete(await followRedirect()(start));
    });
    expect(await session.grantedScope()).toBe("notes:read");
    const response = await rpc("tools/call", { name: "write_note", arguments: { text: "hi" } });
    expect(response.status).toBe(200);
    expect(server.log.authorizations.at(-1)!.scopes).toEqual(["notes:read", "notes:write"]);
    expect(await session.grantedScope()).toBe("notes:read notes:write");
  });

  it("refuses an authorization response from another issuer (RFC 9207)", async () => {
    const session = new OAuthSession({
      serverUrl: server.url,
      store: memoryStore(),
      redirectUrl: `${ORIGIN}/v1/oauth/callback`,
      clientMetadata: { client_name: "OpenBot test", redirect_uris: [`${ORIGIN}/v1/oauth/callback`] },
    });
    const start = await session.authorize({});
    if (start === "AUTHORIZED") throw new Error("expected a redirect");
    const params = await followRedirect()(start);
    params.set("iss", "https://evil.example/");
    await expect(session.complete(params)).rejects.toMatchObject({ reason: "issuer_mismatch" });
    expect(await session.signedIn()).toBe(false);
  });
});

describe("where the callback sends the person back", () => {
  it("only / or a chat path is accepted as returnTo, never an absolute or protocol-relative URL", () => {
    for (const ok of ["/", "/chats/chat_1", "/chats/abc-DEF_9"])
      expect(oauthSignInSchema.safeParse({ for: "me", returnTo: ok }).success).toBe(true);
    for (const bad of [
      "https://evil.example/",
      "//evil.example/chats/x",
      "/chats/../admin",
      "/admin/apps",
      "/chats/x?y=1",
      "/\\evil.example",
      "chats/x",
    ]) {
      const parsed = oauthSignInSchema.safeParse({ for: "me", returnTo: bad });
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.message).toContain("returnTo");
    }
  });
});
