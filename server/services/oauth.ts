/**
 * Signing in to OAuth Apps. The shared sign-in of a connection is an admin's; a per-person App's own
 * sign-in is each member's (apps.use). The callback completes a sign-in only for the signed-in person who
 * started it, checked by its `state`. Answers never carry a token.
 */
import "server-only";
import { oauthCallbackSchema, oauthReturnToSchema, oauthSignInSchema } from "@/contracts/oauth";
import { isOAuthFlowError } from "../apps/oauth/errors";
import { type OAuthTarget, SHARED } from "../apps/oauth/manager";
import type { Platform } from "../platform";
import { type Principal, requirePermission } from "./auth";
import { AppError, invalidInput } from "./errors";

function targetOf(platform: Platform, connectionId: string): OAuthTarget {
  const target = platform.apps.oauthTarget(connectionId);
  if (!target) {
    if (!platform.apps.connection(connectionId)) throw new AppError("NOT_FOUND", "No such connection.");
    throw new AppError("BAD_REQUEST", "This connection does not sign in with OAuth.", { field: "id" });
  }
  return target;
}

/** Whose credentials a request is about: SHARED (admins only) or the caller's own (per-person Apps). */
function whose(target: OAuthTarget, principal: Principal, who: "shared" | "me"): string {
  if (who === "shared") {
    requirePermission(principal, "platform.admin");
    return SHARED;
  }
  if (target.oauth.mode !== "person")
    throw new AppError("BAD_REQUEST", "This App has one shared sign-in (an admin's), not one per person.", {
      field: "for",
    });
  return principal.userId;
}

/** A flow failure the person can act on: a 400 with its reason, never the server's internals. */
async function flow<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isOAuthFlowError(error)) throw new AppError("BAD_REQUEST", error.message, { reason: error.reason });
    throw error;
  }
}

export async function oauthStatus(platform: Platform, principal: Principal | null, connectionId: string) {
  const p = requirePermission(principal, "apps.use");
  const target = targetOf(platform, connectionId);
  const view = platform.apps.connection(connectionId);
  return {
    mode: target.oauth.mode,
    sharedSignedIn: await platform.oauth.signedIn(target, SHARED),
    needsSignIn: view?.oauth?.needsSignIn ?? false,
    ...(target.oauth.mode === "person" ? { signedIn: await platform.oauth.signedIn(target, p.userId) } : {}),
  };
}

export async function startOAuth(
  platform: Platform,
  principal: Principal | null,
  connectionId: string,
  input: unknown,
  origin: string,
) {
  const p = requirePermission(principal, "apps.use");
  const parsed = oauthSignInSchema.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const target = targetOf(platform, connectionId);
  const userId = whose(target, p, parsed.data.for);
  const started = await flow(() =>
    platform.oauth.start(target, userId, p.userId, origin, parsed.data.returnTo ?? null),
  );
  if (started.authorized) await platform.apps.signedInChanged(connectionId, userId);
  return started;
}

export async function signOutOAuth(
  platform: Platform,
  principal: Principal | null,
  connectionId: string,
  input: unknown,
) {
  const p = requirePermission(principal, "apps.use");
  const parsed = oauthSignInSchema.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const target = targetOf(platform, connectionId);
  const userId = whose(target, p, parsed.data.for);
  await platform.oauth.signOut(target, userId);
  await platform.apps.signedInChanged(connectionId, userId);
  return { ok: true as const };
}

/**
 * The authorization server sent the person back: completes their sign-in; says where to go next (the
 * chat the sign-in was started from, when it named one).
 */
export async function finishOAuth(platform: Platform, principal: Principal | null, query: URLSearchParams) {
  const p = requirePermission(principal, "apps.use");
  const parsed = oauthCallbackSchema.safeParse(Object.fromEntries(query));
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const done = await flow(() => platform.oauth.complete(p.userId, query, (id) => platform.apps.oauthTarget(id)));
  await platform.apps.signedInChanged(done.connectionId, done.userId);
  // Back where the sign-in was started (a chat), checked again: only a same-origin relative path is followed.
  const back = oauthReturnToSchema.safeParse(done.returnTo);
  return { connectionId: done.connectionId, shared: done.userId === SHARED, returnTo: back.success ? back.data : null };
}
