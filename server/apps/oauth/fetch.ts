/**
 * The fetch an OAuth-protected http connection's MCP transport sends with: every request carries the
 * session's bearer token; a 401 (no or a rejected token) or a 403 `insufficient_scope` (step-up) is
 * answered by signing in again and sending the request once more. Without `signIn` (no person at hand:
 * a connection's own requests) only a kept refresh token is tried; anything needing a browser fails the
 * request with `auth_required`, before any registration or authorization is started. A challenge that
 * keeps coming back is given up after MAX_ATTEMPTS, not looped on.
 */
import "server-only";
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { OAuthFlowError } from "./errors";
import type { AuthorizationStart, OAuthSession } from "./session";

/** Completes a started authorization without a person (headless flows): the callback's parameters. */
export type SignIn = (start: AuthorizationStart) => Promise<URLSearchParams>;

const MAX_ATTEMPTS = 3;

export function authorizedFetch(session: OAuthSession, signIn: SignIn | null, base: FetchLike = fetch): FetchLike {
  return async (input, init) => {
    let sent: string | undefined;
    const send = async () => {
      const headers = new Headers(init?.headers);
      const token = await session.accessToken();
      sent = token;
      if (token) headers.set("Authorization", `Bearer ${token}`);
      return base(input, { ...init, headers });
    };
    let response = await send();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const challenge = extractWWWAuthenticateParams(response);
      const stepUp = response.status === 403 && challenge.error === "insufficient_scope";
      if (response.status !== 401 && !stepUp) return response;
      await response.body?.cancel().catch(() => undefined);
      if (!signIn) {
        if (stepUp) throw new OAuthFlowError("auth_required", "This App needs more permission: sign in again.");
        await session.refresh(challenge, sent);
      } else {
        const outcome = await session.authorize(challenge, { stepUp });
        if (outcome !== "AUTHORIZED") await session.complete(await signIn(outcome));
      }
      response = await send();
    }
    return response;
  };
}

/**
 * Follows an authorization redirect without a browser, for authorization servers that approve at once
 * (the conformance suite's, test servers): the answer is the Location it redirects to.
 */
export function followRedirect(base: FetchLike = fetch): SignIn {
  return async (start) => {
    const response = await base(start.url, { redirect: "manual" });
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (!location)
      throw new OAuthFlowError(
        "flow_failed",
        `The authorization endpoint answered ${response.status}, not a redirect.`,
      );
    return new URL(location, start.url).searchParams;
  };
}
