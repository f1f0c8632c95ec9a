export interface OAuthServerLog {
  authorizations: {
    clientId: string;
    user: string;
    scopes: string[];
    resource?: string;
    codeChallenge: string;
    redirectUri: string;
  }[];
  tokens: { grant: "authorization_code" | "refresh_token"; resource?: string; user: string }[];
  revoked: string[];
  registrations: number;
  mcpAuth: string[];
}
export interface OAuthServer {
  url: string;
  issuer: string;
  log: OAuthServerLog;
  signInAs(user: string): void;
  expireTokens(): void;
  liveTokens(): number;
  close(): Promise<void>;
}
export function startOAuthServer(options?: { port?: number; tokenSeconds?: number }): Promise<OAuthServer>;
