/**
 * One visibility rule for errors, used by REST and tRPC alike: a domain error (from any module graph)
 * passes with its code, message and safe details; anything else is logged under a new error id and the
 * caller learns only that id.
 */
import "server-only";
import { logFailure } from "../log";
import { type AppErrorCode, isAppError } from "../services/errors";

export type PublicError =
  | { code: AppErrorCode; message: string; details?: Record<string, unknown> }
  | { code: "INTERNAL"; message: string; errorId: string };

export function toPublicError(error: unknown, event: string, fields: Record<string, unknown> = {}): PublicError {
  if (isAppError(error))
    return { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
  const errorId = logFailure(event, error, fields);
  return { code: "INTERNAL", message: `Something went wrong on the server (${errorId}).`, errorId };
}
