/**
 * The client side of the MCP conformance suite's `auth/...` scenarios, run with OpenBot's own OAuth code:
 * the same `OAuthSession` (discovery, issuer checks, CIMD / registration / pre-registered client, PKCE,
 * `resource`, step-up, refresh) and `authorizedFetch` that http connections use, over the same transport
 * (`openTransport`). Only the person is missing: the suite's authorization server approves at once, so its
 * redirect is followed here instead of in a browser, and the credentials live in memory.
 */
import "server-only";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { conformanceConnection } from "../conformance";
import { authorizedFetch, followRedirect } from "./fetch";
import { memoryStore, OAuthSession } from "./session";

/** The redirect URI the suite's authorization server expects from a CLI client. */
const REDIRECT_URL = "http://localhost:3000/callback";
/** The suite's fixed Client ID Metadata Document URL (its server accepts it without fetching it). */
const SUITE_CIMD_URL = "https://conformance-test.local/client-metadata.json";

/**
 * Wraps fetch for one scenario. The protocol client that runs over it may differ (the 2026-07-28
 * stateless lifecycle is the protocol layer's), so `exercise` can bring its own; by default the
 * connection's own transport and the SDK client connect, list the tools and call them.
 */
export type Exercise = (authorize: (base: FetchLike) => FetchLike) => Promise<void>;

/** Resolves when the scenario's flow completed (connected, listed and called the tools), throws otherwise. */
export async function runAuthScenario(
  serverUrl: string,
  scenario: string,
  context: unknown,
  exercise: Exercise = (authorize) => viaTransport(serverUrl, authorize),
): Promise<void> {
  const ctx = (context ?? {}) as { client_id?: unknown; client_secret?: unknown };
  const preRegistered =
    scenario === "auth/pre-registration" && typeof ctx.client_id === "string"
      ? {
          client_id: ctx.client_id,
          ...(typeof ctx.client_secret === "string" ? { client_secret: ctx.client_secret } : {}),
        }
      : undefined;
  if (scenario === "auth/pre-registration" && !preRegistered)
    throw new Error("auth/pre-registration needs client_id in MCP_CONFORMANCE_CONTEXT");
  const session = new OAuthSession({
    serverUrl,
    store: memoryStore(),
    redirectUrl: REDIRECT_URL,
    clientMetadata: {
      client_name: "OpenBot",
      redirect_uris: [REDIRECT_URL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      application_type: "native",
    } as never,
    clientMetadataUrl: SUITE_CIMD_URL,
    preRegistered,
  });
  await exercise((base) => authorizedFetch(session, followRedirect(base), base));
}

/**
 * The connection's own code over the authorizing fetch: `AppConnection` (v2 client SDK) speaks whichever
 * revision the suite's server offers (2026-07-28 stateless, or the 2025 `initialize` handshake), lists the
 * tools and calls the scenario's tool.
 */
async function viaTransport(serverUrl: string, authorize: (base: FetchLike) => FetchLike): Promise<void> {
  const conn = conformanceConnection(serverUrl, {
    onInput: (input) => void input.answer({ action: "decline" }).catch(() => undefined),
    authorize,
  });
  try {
    await conn.start();
    if (conn.status !== "connected") throw new Error(`connecting failed: ${conn.error ?? conn.status}`);
    for (const tool of conn.tools) {
      if (tool.name === "test-tool" || conn.tools.length === 1)
        await conn.call(
          { kind: "tool", name: tool.name, args: {} },
          { timeoutMs: 20_000, binding: `conformance.${tool.name}` },
        );
    }
  } finally {
    await conn.stop();
  }
}
