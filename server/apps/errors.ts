/**
 * Errors of the Apps layer. `AppCallError` is the one failure of `AppRegistry.call`, with a reason the
 * program sees as `details.reason` and a message that is safe to show (no server internals beyond what the
 * App itself said). `ConnectionConfigError` names the field of a bad connection request.
 */
import "server-only";
import { hasKind } from "../error-kind";
import type { PendingInput } from "./elicitation";
import type { TaskState } from "./tasks";

export type AppCallFailure =
  | "timeout"
  | "unavailable"
  | "tool_error"
  | "invalid_arguments"
  | "input_required"
  /** An OAuth App the caller (or, shared, the admin) has not signed in to. */
  | "auth_required"
  /** The App answered a call that allowed it with a task (see tasks.ts): the result comes later. */
  | "task_started";

/** A CallToolResult as the App sent it (or as a resource/prompt read is shaped for programs). */
export interface AppCallResult {
  content: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** The embedded requests of an `input_required` result (one elicitation, sampling or roots request each). */
export interface InputRequired {
  inputRequests: Record<string, { method: string; params?: unknown }>;
  requestState?: string;
}

export const APP_CALL_FAILURES: readonly AppCallFailure[] = [
  "timeout",
  "unavailable",
  "tool_error",
  "invalid_arguments",
  "input_required",
  "auth_required",
  "task_started",
];

export class AppCallError extends Error {
  override readonly name = "AppCallError";
  /** The tag the guard checks (the class itself differs between Next's module graphs). */
  readonly kind = "AppCallError" as const;
  constructor(
    readonly reason: AppCallFailure,
    message: string,
    /** The App's own result, for `tool_error` from an `isError: true` result. */
    readonly result?: AppCallResult,
    /** The open question, for `input_required`: answer it outside the program. */
    readonly input?: PendingInput,
    /** What else the App answered: its task for `task_started` (poll it with `AppRegistry.task`); the
     * `input_required` result itself for a call made with `inputRequired: "return"` (nothing waits in memory). */
    extra: { task?: TaskState; asked?: InputRequired } = {},
  ) {
    super(message);
    this.task = extra.task;
    this.asked = extra.asked;
  }
  readonly task?: TaskState;
  readonly asked?: InputRequired;
}

export class ConnectionConfigError extends Error {
  override readonly name = "ConnectionConfigError";
  readonly kind = "ConnectionConfigError" as const;
  constructor(
    message: string,
    /** The offending field, e.g. `transport.url`. */
    readonly field?: string,
    readonly code: "BAD_REQUEST" | "NOT_FOUND" = "BAD_REQUEST",
  ) {
    super(message);
  }
}

/** An AppCallError from any module graph (checked by its tag and reason, not by class). */
export function isAppCallError(value: unknown): value is AppCallError {
  return (
    hasKind(value, "AppCallError") &&
    APP_CALL_FAILURES.includes((value as { reason?: unknown }).reason as AppCallFailure)
  );
}

export function isConnectionConfigError(value: unknown): value is ConnectionConfigError {
  return hasKind(value, "ConnectionConfigError");
}
