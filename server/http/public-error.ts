/**
 * One visibility rule for errors, used by REST and tRPC alike: a domain error (from any module graph)
 * passes with its code, message and safe details; a database that could not be reached is UNAVAILABLE
 * (503: send it again) under a new error id; anything else is logged under a new error id and the caller
 * learns only that id.
 */
import "server-only";
import { isStorageUnavailable } from "../db/client";
import { logFailure } from "../log";
import { type AppErrorCode, isAppError } from "../services/errors";

export type PublicError =
  | { code: AppErrorCode; message: string; details?: Record<string, unknown> }
  | { code: "INTERNAL"; message: string; errorId: string };

export function toPublicError(error: unknown, event: string, fields: Record<string, unknown> = {}): PublicError {
  if (isAppError(error))
    return { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  const errorId = logFailure(event, error, fields);
  if (isStorageUnavailable(error)) {
    return {
      code: "UNAVAILABLE",
      message: `The database is unavailable right now (${errorId}); send the request again once it is back.`,
      details: { errorId, retryable: true },
    };
  }
  return { code: "INTERNAL", message: `Something went wrong on the server (${errorId}).`, errorId };
}
