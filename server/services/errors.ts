/**
 * One domain error with a code. Services throw it; REST and tRPC map the code to a status in one place
 * each. `details` is safe to show to the caller.
 */
import "server-only";
import { hasKind } from "../error-kind";

export type AppErrorCode =
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "BAD_REQUEST"
  | "UNAVAILABLE"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_MANY_REQUESTS";

export class AppError extends Error {
  override readonly name = "AppError";
  /** The tag `isAppError` checks (the class itself differs between Next's module graphs). */
  readonly kind = "AppError" as const;
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const HTTP_STATUS: Record<AppErrorCode, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  BAD_REQUEST: 400,
  UNAVAILABLE: 503,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
};

/** An AppError from any module graph: tagged, with a known code. */
export function isAppError(value: unknown): value is AppError {
  return hasKind(value, "AppError") && Object.hasOwn(HTTP_STATUS, (value as { code?: unknown }).code as string);
}

/** Turns a zod error into a BAD_REQUEST that names each wrong field. */
export function invalidInput(issues: { path: PropertyKey[]; message: string }[]): AppError {
  const fields = issues.map((i) => ({ field: i.path.map(String).join("."), message: i.message }));
  const text = fields.map((f) => (f.field ? `${f.field}: ${f.message}` : f.message)).join("; ");
  return new AppError("BAD_REQUEST", text, { fields });
}

/**
 * Refuses a request's path ids or query values holding a NUL character (U+0000): no text column can
 * store one (Postgres refuses it, so it would surface as a server error). The 400 names where it is, as
 * `where` followed by the name (`path.id`, `query.chatId`; `path.name.1` for a catch-all segment).
 */
export function refuseNul(values: Record<string, string | string[] | undefined>, where: string): void {
  for (const [key, value] of Object.entries(values)) {
    const texts = Array.isArray(value)
      ? value.map((text, i) => [`${where}.${key}.${i}`, text])
      : [[`${where}.${key}`, value]];
    const at = key.includes("\u0000") ? where : texts.find(([, text]) => text?.includes("\u0000"))?.[0];
    if (at !== undefined)
      throw new AppError("BAD_REQUEST", `${at}: must not contain a NUL character (\\u0000)`, {
        fields: [{ field: at, message: "must not contain a NUL character" }],
      });
  }
}
