/**
 * The fetch an OAuth-protected http connection's MCP transport sends with: every request carries the
 * session's bearer token; a 401 (no or a rejected token) or a 403 `insufficient_scope` (step-up) is
 * answered by signing in again and sending the request once more. When signing in needs a person (a
 * browser), `signIn` says so by returning undefined and the request fails with `auth_required`. A
 * challenge that keeps coming back is given up after MAX_ATTEMPTS, not looped on.
 */
import "server-only";
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { OAuthFlowError } from "./errors";
import type { AuthorizationStart, OAuthSession } from "./session";

/** Completes a started authorization (headless flows), or undefined when a person has to. */
export type SignIn = (start: AuthorizationStart) => Promise<URLSearchParams | undefined>;

const MAX_ATTEMPTS = 3;

export function authorizedFetch(session: OAuthSession, signIn: SignIn, base: FetchLike = fetch): FetchLike {
  return async (input, init) => {
    const send = async () => {
      const headers = new Headers(init?.headers);
      const token = await session.accessToken();
      if (token) headers.set("Authorization", `Bearer ${token}`);
      return base(input, { ...init, headers });
    };
    let response = await send();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const challenge = extractWWWAuthenticateParams(response);
      const stepUp = response.status === 403 && challenge.error === "insufficient_scope";
      if (response.status !== 401 && !stepUp) return response;
      await response.body?.cancel().catch(() => undefined);
      const outcome = await session.authorize(challenge, { stepUp });
      if (outcome !== "AUTHORIZED") {
        const params = await signIn(outcome);
        if (!params) throw new OAuthFlowError("auth_required", "Sign in to this App first.");
        await session.complete(params);
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
