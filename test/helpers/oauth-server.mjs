/**
 * A local OAuth 2.1 authorization server and the MCP server it protects, on one real HTTP port, built
 * from the MCP SDK's server-side auth helpers (mcpAuthRouter: metadata, registration, authorize, token,
 * revocation; requireBearerAuth; RFC 9728 metadata). The authorization endpoint approves at once as the
 * person `signInAs` names (no login page), redirecting with `code`, `state` and `iss`. Tools:
 * `whoami` (who the token belongs to), `write_note` (needs the `notes:write` scope: a 403
 * insufficient_scope challenge otherwise, for step-up). `expireTokens()` makes every access token
 * invalid at once (the client's clock still thinks it is good), so a refresh is tested without waiting.
 *
 * CLI (Playwright): `node test/helpers/oauth-server.mjs <port>`; POST /test/sign-in-as {user} sets who
 * approves next, GET /test/state reports what happened.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import express from "express";
import { z } from "zod";

export async function startOAuthServer({ port = 0, tokenSeconds = 3600 } = {}) {
  const clients = new Map();
  const codes = new Map();
  const access = new Map();
  const refresh = new Map();
  const log = { authorizations: [], tokens: [], revoked: [], registrations: 0, mcpAuth: [] };
  let user = "alice";

  const provider = {
    clientsStore: {
      getClient: (id) => clients.get(id),
      registerClient: (client) => {
        const full = {
          ...client,
          client_id: `client_${randomUUID()}`,
          client_id_issued_at: Math.floor(Date.now() / 1000),
        };
        clients.set(full.client_id, full);
        log.registrations += 1;
        return full;
      },
    },
    async authorize(client, params, res) {
      const code = randomBytes(16).toString("hex");
      codes.set(code, { clientId: client.client_id, params, user });
      log.authorizations.push({
        clientId: client.client_id,
        user,
        scopes: params.scopes ?? [],
        resource: params.resource?.href,
        codeChallenge: params.codeChallenge,
        redirectUri: params.redirectUri,
      });
      const target = new URL(params.redirectUri);
      target.searchParams.set("code", code);
      if (params.state !== undefined) target.searchParams.set("state", params.state);
      target.searchParams.set("iss", issuer.href);
      res.redirect(302, target.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const entry = codes.get(code);
      if (!entry) throw new Error("unknown code");
      return entry.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, _redirectUri, resource) {
      const entry = codes.get(code);
      if (!entry || entry.clientId !== client.client_id) throw new Error("unknown code");
      codes.delete(code);
      log.tokens.push({ grant: "authorization_code", resource: resource?.href, user: entry.user });
      return issue(client.client_id, entry.user, entry.params.scopes ?? [], resource?.href);
    },
    async exchangeRefreshToken(client, token, _scopes, resource) {
      const entry = refresh.get(token);
      if (!entry || entry.clientId !== client.client_id) throw new Error("unknown refresh token");
      refresh.delete(token);
      log.tokens.push({ grant: "refresh_token", resource: resource?.href, user: entry.user });
      return issue(client.client_id, entry.user, entry.scopes, entry.resource);
    },
    async verifyAccessToken(token) {
      const entry = access.get(token);
      if (!entry) throw new InvalidTokenError("The access token is not valid.");
      return {
        token,
        clientId: entry.clientId,
        scopes: entry.scopes,
        expiresAt: entry.expiresAt,
        extra: { user: entry.user },
      };
    },
    async revokeToken(_client, request) {
      log.revoked.push(request.token);
      access.delete(request.token);
      refresh.delete(request.token);
    },
  };

  function issue(clientId, who, scopes, resource) {
    const token = `at_${randomBytes(16).toString("hex")}`;
    const refreshToken = `rt_${randomBytes(16).toString("hex")}`;
    access.set(token, {
      clientId,
      user: who,
      scopes,
      resource,
      expiresAt: Math.floor(Date.now() / 1000) + tokenSeconds,
    });
    refresh.set(refreshToken, { clientId, user: who, scopes, resource });
    return {
      access_token: token,
      token_type: "Bearer",
      expires_in: tokenSeconds,
      refresh_token: refreshToken,
      scope: scopes.join(" "),
    };
  }

  const app = express();
  const server = await new Promise((resolve) => {
    const s = app.listen(port, "127.0.0.1", () => resolve(s));
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const issuer = new URL(`${origin}/`);
  const mcpUrl = new URL(`${origin}/mcp`);
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(mcpUrl);

  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: issuer,
      resourceServerUrl: mcpUrl,
      scopesSupported: ["notes:read", "notes:write"],
      // The approval endpoints answer every call here; the SDK's rate limits would get in the way of tests.
      authorizationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  app.use(express.json());
  app.post("/test/sign-in-as", (req, res) => {
    user = String(req.body?.user ?? "alice");
    res.json({ user });
  });
  app.get("/test/state", (_req, res) => res.json({ ...log, liveTokens: access.size }));

  const bearer = requireBearerAuth({ verifier: provider, requiredScopes: ["notes:read"], resourceMetadataUrl });
  app.post("/mcp", bearer, async (req, res) => {
    log.mcpAuth.push(req.headers.authorization ?? "");
    const body = req.body;
    if (
      body?.method === "tools/call" &&
      body.params?.name === "write_note" &&
      !req.auth.scopes.includes("notes:write")
    ) {
      res.set(
        "WWW-Authenticate",
        `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${resourceMetadataUrl}"`,
      );
      res.status(403).json({ error: "insufficient_scope" });
      return;
    }
    const mcp = new McpServer({ name: "oauth-notes", version: "1.0.0" });
    const who = req.auth.extra.user;
    mcp.registerTool(
      "whoami",
      { description: "Who the token belongs to", annotations: { readOnlyHint: true } },
      async () => ({
        content: [{ type: "text", text: `you are ${who}` }],
        structuredContent: { user: who },
      }),
    );
    mcp.registerTool(
      "write_note",
      { description: "Writes a note (needs notes:write)", inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: "text", text: `${who} wrote ${text}` }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  app.get("/mcp", (_req, res) => res.status(405).end());
  app.delete("/mcp", (_req, res) => res.status(405).end());

  return {
    url: mcpUrl.href,
    issuer: issuer.href,
    log,
    signInAs(next) {
      user = next;
    },
    /** Every access token stops working (refresh tokens still do). */
    expireTokens() {
      access.clear();
    },
    liveTokens: () => access.size,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? 0);
  const s = await startOAuthServer({ port });
  console.log(`oauth server ${s.url}`);
  process.on("SIGTERM", () => void s.close().then(() => process.exit(0)));
}
