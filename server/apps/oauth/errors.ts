/**
 * Failures of an OAuth sign-in, as data (`kind` tag, never `instanceof`). Messages are safe to show: they
 * name what went wrong, never a token, a code or a client secret.
 */
import "server-only";
import { hasKind } from "../../error-kind";

export type OAuthFailure =
  /** Nobody is signed in (or the sign-in expired and cannot be refreshed): a person must sign in. */
  | "auth_required"
  /** The callback's `state` is not the started flow's (or it expired). */
  | "state_mismatch"
  /** Metadata or the authorization response came from another authorization server. */
  | "issuer_mismatch"
  | "access_denied"
  /** Discovery, registration or the token request failed. */
  | "flow_failed";

export class OAuthFlowError extends Error {
  override readonly name = "OAuthFlowError";
  readonly kind = "OAuthFlowError" as const;
  constructor(
    readonly reason: OAuthFailure,
    message: string,
  ) {
    super(message);
  }

  /** Wraps an SDK error (its message says which step failed; it never carries a token). */
  static from(error: unknown): OAuthFlowError {
    if (isOAuthFlowError(error)) return error;
    const text = error instanceof Error ? error.message : String(error);
    return new OAuthFlowError("flow_failed", `Signing in failed: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
  }
}

export function isOAuthFlowError(value: unknown): value is OAuthFlowError {
  return hasKind(value, "OAuthFlowError");
}
