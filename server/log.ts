/**
 * The server log: one JSON line per event on stderr. Causes of failures are logged here under their
 * error id, never shown to callers.
 */
import { randomUUID } from "node:crypto";

export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  if (process.env.OPENBOT_LOG === "silent") return;
  process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), event, ...fields })}\n`);
}

/** Logs an unexpected cause (with its stack) and returns the error id that refers to it. */
export function logFailure(event: string, cause: unknown, fields: Record<string, unknown> = {}): string {
  const errorId = `err_${randomUUID()}`;
  const message = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const stack = cause instanceof Error ? cause.stack : undefined;
  logEvent(event, { errorId, message, stack, ...fields });
  return errorId;
}

/** Logs an expected failure (a program's own error, a refused call) by a new error id, without a stack. */
export function logOutcome(event: string, message: string, fields: Record<string, unknown> = {}): string {
  const errorId = `err_${randomUUID()}`;
  logEvent(event, { errorId, message, ...fields });
  return errorId;
}
