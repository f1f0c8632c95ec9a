/**
 * One domain error with a code. Services throw it; REST and tRPC map the code to a status in one place
 * each. `details` is safe to show to the caller.
 */
export type AppErrorCode = "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT" | "BAD_REQUEST" | "TOO_MANY_REQUESTS" | "UNAVAILABLE";

export class AppError extends Error {
  override readonly name = "AppError";
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
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
};

/** Turns a zod error into a BAD_REQUEST that names each wrong field. */
export function invalidInput(issues: { path: PropertyKey[]; message: string }[]): AppError {
  const fields = issues.map((i) => ({ field: i.path.map(String).join("."), message: i.message }));
  const text = fields.map((f) => (f.field ? `${f.field}: ${f.message}` : f.message)).join("; ");
  return new AppError("BAD_REQUEST", text, { fields });
}
