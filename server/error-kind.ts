/**
 * Errors cross module boundaries as data. Next loads instrumentation (where the platform and its App
 * registry are made) and each route handler as separate module graphs, so `instanceof` on a class from
 * another graph is false in the build. Every server error class carries a `kind` tag and is told apart
 * by it, never by class identity.
 */
import "server-only";

/** Whether `value` is an Error-like object tagged with `kind`. */
export function hasKind<K extends string>(value: unknown, kind: K): value is Error & { readonly kind: K } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { kind?: unknown }).kind === kind &&
    typeof (value as { message?: unknown }).message === "string"
  );
}
