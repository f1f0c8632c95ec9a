/**
 * The server log: one JSON line per event on stderr. A failure is logged by its error id and kind (and,
 * for an unexpected one, the code locations it came from), never by its text: messages carry what
 * programs, Apps and callers wrote (program errors, App errors echoing a secret, argument values). The
 * full cause stays encrypted with the run or App operation it belongs to.
 */
import "server-only";
import { randomUUID } from "node:crypto";

export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  if (process.env.OPENBOT_LOG === "silent") return;
  process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), event, ...fields })}\n`);
}

/**
 * What may be logged of a cause: its class name with its tag, reason or code (`AppCallError:timeout`,
 * `error:42P01`), and the stack's code locations without the message lines.
 */
export function describeCause(cause: unknown): { kind: string; at?: string[] } {
  if (typeof cause !== "object" || cause === null) return { kind: typeof cause };
  const e = cause as { name?: unknown; kind?: unknown; reason?: unknown; code?: unknown; stack?: unknown };
  const name = typeof e.kind === "string" ? e.kind : typeof e.name === "string" ? e.name : "object";
  const detail = [e.reason, e.code].find(
    (v) => (typeof v === "string" && /^[\w.-]{1,40}$/.test(v)) || typeof v === "number",
  );
  const kind = detail === undefined ? name.slice(0, 80) : `${name.slice(0, 80)}:${String(detail)}`;
  const frames = framesOf(e.stack, (cause as { message?: unknown }).message);
  return frames.length ? { kind, at: frames } : { kind };
}

/** The `at …` lines of a stack after its message (which can itself hold lines that look like frames). */
function framesOf(stack: unknown, message: unknown): string[] {
  if (typeof stack !== "string") return [];
  const text = typeof message === "string" ? message : "";
  const start = text ? stack.indexOf(text) : 0;
  if (start < 0) return [];
  return stack
    .slice(start + text.length)
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 12)
    .map((line) => line.trim().slice(0, 300));
}

/** Logs an unexpected cause (its kind and code locations) and returns the error id that refers to it. */
export function logFailure(event: string, cause: unknown, fields: Record<string, unknown> = {}): string {
  const errorId = `err_${randomUUID()}`;
  logEvent(event, { errorId, ...describeCause(cause), ...fields });
  return errorId;
}

/** Logs an expected failure (a program's own error, a refused call) by a new error id and its kind. */
export function logOutcome(event: string, kind: string, fields: Record<string, unknown> = {}): string {
  const errorId = `err_${randomUUID()}`;
  logEvent(event, { errorId, kind, ...fields });
  return errorId;
}
