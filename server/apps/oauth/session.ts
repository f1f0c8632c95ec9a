/**
 * One OAuth 2.1 sign-in of OpenBot to one protected MCP server, per the MCP authorization spec. The SDK's
 * `auth()` does the protocol (RFC 9728 protected resource metadata, RFC 8414 / OIDC discovery, Client ID
 * Metadata Document or dynamic registration, PKCE, `resource`, refresh); this class is its
 * `OAuthClientProvider` over a `CredentialStore` (the database for connections, memory for conformance)
 * and adds what the SDK leaves to the client: the metadata `issuer` check (RFC 8414 §3.3), the
 * authorization response's `state` and `iss` (RFC 9207) checks, and step-up scope (the union of what was
 * granted and what the challenge asks for).
 */
import "server-only";
import { randomBytes } from "node:crypto";
import {
  auth,
  discoverOAuthServerInfo,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { OAuthFlowError } from "./errors";

/** Everything one sign-in keeps between requests (stored encrypted by the database store). */
export interface OAuthCredentials {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens & { expires_at?: number };
  discovery?: OAuthDiscoveryState;
  /** A started authorization waiting for its callback. */
  pending?: { state: string; verifier: string; scope?: string; createdAt: number };
}

export interface CredentialStore {
  load(): Promise<OAuthCredentials>;
  save(credentials: OAuthCredentials): Promise<void>;
}

export interface OAuthSessionOptions {
  serverUrl: string;
  store: CredentialStore;
  /** Where the authorization server sends the person back (OpenBot's callback route). */
  redirectUrl: string;
  clientMetadata: OAuthClientMetadata;
  /** OpenBot's Client ID Metadata Document (used when the server says it supports them; https only). */
  clientMetadataUrl?: string;
  /** A client registered by hand with the authorization server (skips CIMD and registration). */
  preRegistered?: { client_id: string; client_secret?: string };
  fetch?: FetchLike;
  now?: () => number;
}

export interface Challenge {
  resourceMetadataUrl?: URL;
  scope?: string;
  error?: string;
}

/** A started sign-in: send the person's browser to `url`. */
export interface AuthorizationStart {
  url: URL;
  state: string;
}

const PENDING_MS = 15 * 60_000;
const EXPIRY_MARGIN_MS = 30_000;

export class OAuthSession {
  private credentials?: OAuthCredentials;
  private redirect?: URL;
  private readonly fetchFn: FetchLike;
  private readonly now: () => number;
  /** The refresh on its way (refreshOnce). */
  private refreshing?: Promise<"AUTHORIZED" | "REDIRECT">;

  constructor(private readonly options: OAuthSessionOptions) {
    this.fetchFn = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
  }

  /** The access token to send, refreshed first when it has expired and a refresh token is kept. */
  async accessToken(): Promise<string | undefined> {
    const c = await this.load();
    const tokens = c.tokens;
    if (!tokens) return undefined;
    if (tokens.expires_at !== undefined && tokens.expires_at - EXPIRY_MARGIN_MS <= this.now()) {
      if (!tokens.refresh_token) return undefined;
      const outcome = await this.refreshOnce(() => this.run({ scope: tokens.scope }, { refreshOnly: true }));
      return outcome === "AUTHORIZED" ? (await this.load()).tokens?.access_token : undefined;
    }
    return tokens.access_token;
  }

  /** The scope granted so far (from the token response). */
  async grantedScope(): Promise<string | undefined> {
    return (await this.load()).tokens?.scope;
  }

  async signedIn(): Promise<boolean> {
    return Boolean((await this.load()).tokens);
  }

  /**
   * A 401 with nobody at hand to sign in: a kept refresh token is exchanged for a new access token;
   * without one (or when the refresh is refused) this fails with `auth_required`. `rejected`: the access
   * token the 401 answered; when the session holds another one by now (a request beside it refreshed),
   * nothing is exchanged and the request is simply sent again with it.
   */
  async refresh(challenge: Challenge = {}, rejected?: string): Promise<void> {
    if (this.refreshing) {
      await this.refreshing;
      return;
    }
    const c = await this.load();
    if (rejected !== undefined && c.tokens?.access_token !== undefined && c.tokens.access_token !== rejected) return;
    if (!c.tokens?.refresh_token) {
      if (c.tokens) await this.save({ ...c, tokens: undefined });
      throw new OAuthFlowError("auth_required", "Sign in to this App first.");
    }
    const scope = c.tokens.scope;
    await this.discover(challenge.resourceMetadataUrl);
    await this.refreshOnce(() =>
      this.run({ scope, resourceMetadataUrl: challenge.resourceMetadataUrl }, { refreshOnly: true }),
    );
  }

  /**
   * One refresh at a time per session: requests that meet an expired or rejected token together share it.
   * A refresh token is good for one exchange (servers rotate it), so a second exchange of the same one is
   * refused and would end the sign-in (`auth_required`) for a request that only came at the wrong moment.
   */
  private refreshOnce(exchange: () => Promise<"AUTHORIZED" | "REDIRECT">): Promise<"AUTHORIZED" | "REDIRECT"> {
    this.refreshing ??= exchange().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Answers a 401/403 challenge: refreshes when it can, else starts an authorization and returns where to
   * send the person. `stepUp` (an `insufficient_scope` 403) asks for the union of the granted and the
   * challenged scopes and never reuses the refresh token (a refresh cannot widen the grant).
   */
  async authorize(
    challenge: Challenge = {},
    opts: { stepUp?: boolean } = {},
  ): Promise<"AUTHORIZED" | AuthorizationStart> {
    const c = await this.load();
    const discovery = await this.discover(challenge.resourceMetadataUrl);
    const asked = opts.stepUp ? unionScopes(c.tokens?.scope, challenge.scope) : challenge.scope;
    const scope = withOfflineAccess(asked ?? discovery.resourceMetadata?.scopes_supported?.join(" "), discovery);
    if (opts.stepUp && c.tokens) await this.save({ ...(await this.load()), tokens: undefined });
    const outcome = await this.run({ scope, resourceMetadataUrl: challenge.resourceMetadataUrl });
    if (outcome === "AUTHORIZED") return outcome;
    const pending = (await this.load()).pending;
    if (!this.redirect || !pending) throw new OAuthFlowError("flow_failed", "The authorization could not be started.");
    return { url: this.redirect, state: pending.state };
  }

  /**
   * The authorization server sent the person back (`code`, `state`, maybe `iss` or `error`): checks the
   * state against the started flow and the issuer (RFC 9207), then exchanges the code for tokens.
   */
  async complete(params: URLSearchParams): Promise<void> {
    const c = await this.load();
    const pending = c.pending;
    const state = params.get("state");
    if (!pending?.state || state !== pending.state || pending.createdAt + PENDING_MS < this.now())
      throw new OAuthFlowError("state_mismatch", "This sign-in was not started here or has expired; start it again.");
    try {
      // The SDK keeps metadata fields it does not know (RFC 9207's flag among them).
      const metadata = c.discovery?.authorizationServerMetadata as
        | { issuer?: string; authorization_response_iss_parameter_supported?: boolean }
        | undefined;
      const iss = params.get("iss");
      if (metadata?.authorization_response_iss_parameter_supported === true && iss === null)
        throw new OAuthFlowError("issuer_mismatch", "The authorization server did not say who it is (no iss).");
      // RFC 9207 §2.4: simple string comparison, no URL normalisation.
      if (iss !== null && iss !== metadata?.issuer)
        throw new OAuthFlowError("issuer_mismatch", "The answer came from a different authorization server (iss).");
      const error = params.get("error");
      if (error)
        throw new OAuthFlowError(
          "access_denied",
          `The authorization server refused: ${error.slice(0, 100)}${describeError(params.get("error_description"))}`,
        );
      const code = params.get("code");
      if (!code) throw new OAuthFlowError("flow_failed", "The authorization server sent no code.");
      const outcome = await this.run({ scope: pending.scope }, { authorizationCode: code });
      if (outcome !== "AUTHORIZED") throw new OAuthFlowError("flow_failed", "The code was not exchanged for tokens.");
    } finally {
      // A state is good for one answer, whatever it was.
      const now = await this.load();
      if (now.pending?.state === pending.state) await this.save({ ...now, pending: undefined });
    }
  }

  /** Forgets the tokens (and the registration when `all`). */
  async forget(scope: "tokens" | "all" = "tokens"): Promise<void> {
    const c = await this.load();
    await this.save(scope === "all" ? {} : { ...c, tokens: undefined, pending: undefined });
  }

  /**
   * Revokes the refresh and access tokens at the authorization server (RFC 7009) when it has a
   * revocation endpoint, then forgets everything. Best effort: a server that cannot be reached does not
   * keep the connection from being removed (the tokens are forgotten here either way).
   */
  async revoke(): Promise<{ revoked: number }> {
    const c = await this.load();
    const endpoint = (c.discovery?.authorizationServerMetadata as { revocation_endpoint?: string } | undefined)
      ?.revocation_endpoint;
    const client = c.client ?? this.options.preRegistered;
    let revoked = 0;
    if (endpoint && client && c.tokens) {
      const methods = (c.discovery?.authorizationServerMetadata as Record<string, unknown> | undefined)
        ?.revocation_endpoint_auth_methods_supported as string[] | undefined;
      const secret = (client as { client_secret?: string }).client_secret;
      const basic = secret !== undefined && (!methods || methods.includes("client_secret_basic"));
      const tokens: [string, string][] = [];
      if (c.tokens.refresh_token) tokens.push([c.tokens.refresh_token, "refresh_token"]);
      tokens.push([c.tokens.access_token, "access_token"]);
      for (const [token, hint] of tokens) {
        const body = new URLSearchParams({ token, token_type_hint: hint });
        const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
        if (basic) {
          const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret!)}`;
          headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
        } else {
          body.set("client_id", client.client_id);
          if (secret !== undefined) body.set("client_secret", secret);
        }
        try {
          const response = await this.fetchFn(endpoint, { method: "POST", headers, body: body.toString() });
          await response.body?.cancel().catch(() => undefined);
          if (response.ok) revoked += 1;
        } catch {
          // unreachable: forgotten below all the same
        }
      }
    }
    await this.save({});
    return { revoked };
  }

  /**
   * Fresh discovery for each challenge (the resource may have moved to another authorization server),
   * checked and kept for the callback and for refreshes.
   */
  private async discover(resourceMetadataUrl: URL | undefined): Promise<OAuthDiscoveryState> {
    let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
    try {
      info = await discoverOAuthServerInfo(this.options.serverUrl, { resourceMetadataUrl, fetchFn: this.fetchFn });
    } catch (error) {
      throw OAuthFlowError.from(error);
    }
    const state: OAuthDiscoveryState = {
      authorizationServerUrl: info.authorizationServerUrl,
      resourceMetadataUrl: resourceMetadataUrl?.toString(),
      resourceMetadata: info.resourceMetadata,
      authorizationServerMetadata: info.authorizationServerMetadata,
    };
    checkIssuer(state);
    await this.save({ ...(await this.load()), discovery: state });
    return state;
  }

  private async run(
    { scope, resourceMetadataUrl }: { scope?: string; resourceMetadataUrl?: URL },
    opts: { authorizationCode?: string; refreshOnly?: boolean } = {},
  ): Promise<"AUTHORIZED" | "REDIRECT"> {
    this.redirect = undefined;
    const provider = this.provider(scope, opts.refreshOnly === true);
    try {
      return await auth(provider, {
        serverUrl: this.options.serverUrl,
        resourceMetadataUrl,
        scope,
        authorizationCode: opts.authorizationCode,
        fetchFn: this.fetchFn,
      });
    } catch (error) {
      throw OAuthFlowError.from(error);
    }
  }

  /** The SDK's view of this session. `refreshOnly`: a failed refresh must not start an authorization. */
  private provider(scope: string | undefined, refreshOnly: boolean): OAuthClientProvider {
    const o = this.options;
    return {
      get redirectUrl() {
        return o.redirectUrl;
      },
      get clientMetadata() {
        return o.clientMetadata;
      },
      clientMetadataUrl: o.clientMetadataUrl,
      state: () => randomBytes(24).toString("base64url"),
      clientInformation: async () => (await this.load()).client ?? o.preRegistered,
      saveClientInformation: async (client) => this.save({ ...(await this.load()), client }),
      tokens: async () => (await this.load()).tokens,
      saveTokens: async (tokens) => {
        const expires_at = tokens.expires_in !== undefined ? this.now() + tokens.expires_in * 1000 : undefined;
        await this.save({ ...(await this.load()), tokens: { ...tokens, expires_at } });
      },
      saveCodeVerifier: async (verifier) => {
        const c = await this.load();
        await this.save({ ...c, pending: { state: "", verifier, scope, createdAt: this.now() } });
      },
      codeVerifier: async () => {
        const verifier = (await this.load()).pending?.verifier;
        if (!verifier) throw new OAuthFlowError("state_mismatch", "No sign-in was started.");
        return verifier;
      },
      redirectToAuthorization: async (url) => {
        if (refreshOnly) throw new OAuthFlowError("auth_required", "The sign-in has expired.");
        const c = await this.load();
        const state = url.searchParams.get("state") ?? "";
        await this.save({ ...c, pending: { ...c.pending!, state } });
        this.redirect = url;
      },
      saveDiscoveryState: async (state) => {
        checkIssuer(state);
        await this.save({ ...(await this.load()), discovery: state });
      },
      discoveryState: async () => (await this.load()).discovery,
      invalidateCredentials: async (what) => {
        const c = await this.load();
        if (what === "all") await this.save({});
        else if (what === "tokens") await this.save({ ...c, tokens: undefined });
        else if (what === "client") await this.save({ ...c, client: undefined });
        else if (what === "discovery") await this.save({ ...c, discovery: undefined });
        else await this.save({ ...c, pending: undefined });
      },
    };
  }

  private async load(): Promise<OAuthCredentials> {
    this.credentials ??= await this.options.store.load();
    return this.credentials;
  }

  private async save(credentials: OAuthCredentials): Promise<void> {
    this.credentials = credentials;
    await this.options.store.save(credentials);
  }
}

/**
 * RFC 8414 §3.3: the metadata's `issuer` must be the authorization server identifier it was discovered
 * from, else it is another server's metadata. Compared as written (one trailing "/" of a pathless URL
 * aside, which the SDK adds when it falls back to the resource's origin).
 */
function checkIssuer(state: OAuthDiscoveryState): void {
  const issuer = state.authorizationServerMetadata?.issuer;
  if (issuer === undefined) return;
  const advertised = state.resourceMetadata?.authorization_servers?.[0];
  const expected = advertised ?? state.authorizationServerUrl;
  const same = issuer === expected || (!advertised && `${issuer}/` === expected);
  if (!same)
    throw new OAuthFlowError(
      "issuer_mismatch",
      `The authorization server's metadata names another issuer (${issuer.slice(0, 200)}).`,
    );
}

/** A refresh token is worth asking for where the authorization server offers `offline_access`. */
function withOfflineAccess(scope: string | undefined, discovery: OAuthDiscoveryState): string | undefined {
  const offered = discovery.authorizationServerMetadata?.scopes_supported?.includes("offline_access");
  return offered && scope ? unionScopes(scope, "offline_access") : scope;
}

export function unionScopes(a: string | undefined, b: string | undefined): string | undefined {
  const all = new Set([...(a?.split(" ") ?? []), ...(b?.split(" ") ?? [])].filter(Boolean));
  return all.size ? [...all].join(" ") : undefined;
}

function describeError(text: string | null): string {
  return text ? ` (${text.replace(/[^\x20-\x7e]/g, "").slice(0, 200)})` : "";
}

/** An in-memory store (conformance runs, tests). */
export function memoryStore(initial: OAuthCredentials = {}): CredentialStore {
  let value = initial;
  return {
    load: async () => value,
    save: async (next) => {
      value = next;
    },
  };
}
