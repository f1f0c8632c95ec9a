/**
 * OAuth sign-ins of the http connections, kept encrypted in `oauth_credentials` (one row per connection
 * and person; user '' is the shared sign-in). Gives each connection's transport its authorizing fetch,
 * starts a sign-in for a person and completes it from the callback — only for the person who started it —,
 * and revokes every sign-in of a removed connection. Never hands a token to anyone: only the fetch it
 * wraps sends one, to the App's own server.
 */
import "server-only";
import type { OAuthClientMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { decrypt, encrypt, type KeyRing, sha256 } from "../../crypto";
import type { Db } from "../../db/client";
import type { OAuthConfig } from "../transports";
import { OAuthFlowError } from "./errors";
import { authorizedFetch } from "./fetch";
import { type CredentialStore, type OAuthCredentials, OAuthSession } from "./session";

/** The user id of the shared sign-in of a connection. */
export const SHARED = "";
export const CALLBACK_PATH = "/v1/oauth/callback";
export const CLIENT_METADATA_PATH = "/v1/oauth/client-metadata.json";

export interface OAuthTarget {
  connectionId: string;
  url: string;
  oauth: OAuthConfig;
}

export interface ConnectionOAuthOptions {
  db: Db;
  keys: KeyRing;
  /** OPENBOT_PUBLIC_ORIGIN; without it, the origin of the request that started the sign-in. */
  publicOrigin?: string;
  fetch?: FetchLike;
}

interface Row {
  connection_id: string;
  user_id: string;
  data_enc: string;
  started_by: string | null;
  return_to?: string | null;
}

export class ConnectionOAuth {
  private readonly sessions = new Map<string, OAuthSession>();
  /** The origin a sign-in was started from, per session (its redirect URI must stay the same). */
  private readonly origins = new Map<string, string>();

  constructor(private readonly options: ConnectionOAuthOptions) {}

  /** OpenBot's Client ID Metadata Document (served publicly at CLIENT_METADATA_PATH). */
  clientMetadata(origin: string): OAuthClientMetadata & { client_id: string } {
    const base = this.options.publicOrigin ?? origin;
    return {
      client_id: `${base}${CLIENT_METADATA_PATH}`,
      client_name: "OpenBot",
      client_uri: base,
      redirect_uris: [`${base}${CALLBACK_PATH}`],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  /** The fetch a connection's transport sends with, as `userId` (SHARED: the shared sign-in). */
  authorize(target: OAuthTarget, userId: string = SHARED): (base: FetchLike) => FetchLike {
    return (base) => authorizedFetch(this.session(target, userId), null, base);
  }

  async signedIn(target: OAuthTarget, userId: string = SHARED): Promise<boolean> {
    return this.session(target, userId).signedIn();
  }

  /**
   * Starts a sign-in for `userId`'s credentials (SHARED or the person's own), started by `startedBy`:
   * returns where to send their browser, or `authorized` when a kept refresh token was enough.
   */
  async start(
    target: OAuthTarget,
    userId: string,
    startedBy: string,
    origin: string,
    /** Where the callback sends the person back (validated by the caller: a same-origin relative path). */
    returnTo: string | null = null,
  ): Promise<{ authorizationUrl?: string; authorized: boolean }> {
    const key = keyOf(target.connectionId, userId);
    this.origins.set(key, this.options.publicOrigin ?? origin);
    this.sessions.delete(key);
    const session = this.session(target, userId);
    const outcome = await session.authorize({ scope: target.oauth.scope });
    if (outcome === "AUTHORIZED") return { authorized: true };
    await this.options.db.query(
      "update oauth_credentials set state_hash = $1, started_by = $2, return_to = $5 where connection_id = $3 and user_id = $4",
      [sha256(outcome.state), startedBy, target.connectionId, userId, returnTo],
    );
    return { authorizationUrl: outcome.url.toString(), authorized: false };
  }

  /**
   * The callback: finds the started sign-in by its `state`, refuses anyone but the person who started it,
   * and exchanges the code. Returns the connection it was for and where its starter asked to go back to.
   */
  async complete(
    callerId: string,
    params: URLSearchParams,
    targetOf: (connectionId: string) => OAuthTarget | undefined,
  ): Promise<{ connectionId: string; userId: string; returnTo: string | null }> {
    const state = params.get("state");
    const [row] = state
      ? await this.options.db.query<Row>("select * from oauth_credentials where state_hash = $1", [sha256(state)])
      : [];
    if (!row)
      throw new OAuthFlowError("state_mismatch", "This sign-in was not started here or has expired; start it again.");
    if (row.started_by !== callerId)
      throw new OAuthFlowError("state_mismatch", "This sign-in was started by someone else; start your own.");
    const target = targetOf(row.connection_id);
    if (!target) throw new OAuthFlowError("state_mismatch", "The App of this sign-in was removed.");
    await this.options.db.query(
      "update oauth_credentials set state_hash = null where connection_id = $1 and user_id = $2",
      [row.connection_id, row.user_id],
    );
    await this.session(target, row.user_id).complete(params);
    return { connectionId: row.connection_id, userId: row.user_id, returnTo: row.return_to ?? null };
  }

  /** Signs `userId` out of a connection: revokes the tokens and forgets them. */
  async signOut(target: OAuthTarget, userId: string): Promise<void> {
    await this.session(target, userId).revoke();
    await this.options.db.query("delete from oauth_credentials where connection_id = $1 and user_id = $2", [
      target.connectionId,
      userId,
    ]);
    this.sessions.delete(keyOf(target.connectionId, userId));
  }

  /** A removed connection: every sign-in's tokens are revoked and forgotten. */
  async removeAll(target: OAuthTarget): Promise<void> {
    const rows = await this.options.db.query<{ user_id: string }>(
      "select user_id from oauth_credentials where connection_id = $1",
      [target.connectionId],
    );
    for (const row of rows) await this.signOut(target, row.user_id);
  }

  private session(target: OAuthTarget, userId: string): OAuthSession {
    const key = keyOf(target.connectionId, userId);
    const existing = this.sessions.get(key);
    if (existing) return existing;
    const origin = this.options.publicOrigin ?? this.origins.get(key) ?? "http://127.0.0.1";
    const metadata = this.clientMetadata(origin);
    const { client_id: cimdUrl, ...clientMetadata } = metadata;
    const session = new OAuthSession({
      serverUrl: target.url,
      store: this.store(target.connectionId, userId),
      redirectUrl: metadata.redirect_uris[0]!,
      clientMetadata,
      // The SDK presents a metadata document URL only over https (the authorization server fetches it).
      clientMetadataUrl: cimdUrl.startsWith("https://") ? cimdUrl : undefined,
      preRegistered: target.oauth.clientId
        ? {
            client_id: target.oauth.clientId,
            ...(target.oauth.clientSecret ? { client_secret: target.oauth.clientSecret } : {}),
          }
        : undefined,
      fetch: this.options.fetch,
    });
    this.sessions.set(key, session);
    return session;
  }

  private store(connectionId: string, userId: string): CredentialStore {
    const { db, keys } = this.options;
    const aad = `oauth_credentials:${connectionId}:${userId}`;
    return {
      load: async () => {
        const [row] = await db.query<Row>(
          "select data_enc from oauth_credentials where connection_id = $1 and user_id = $2",
          [connectionId, userId],
        );
        return row ? (JSON.parse(decrypt(keys, row.data_enc, aad)) as OAuthCredentials) : {};
      },
      save: async (credentials) => {
        await db.query(
          `insert into oauth_credentials (connection_id, user_id, data_enc, updated_at) values ($1, $2, $3, $4)
           on conflict (connection_id, user_id) do update set data_enc = excluded.data_enc, updated_at = excluded.updated_at`,
          [connectionId, userId, encrypt(keys, JSON.stringify(credentials), aad), Date.now()],
        );
      },
    };
  }
}

function keyOf(connectionId: string, userId: string): string {
  return `${connectionId}\u0000${userId}`;
}
