/**
 * Elicitation: an App that asks a person for input in the middle of a call (MCP `elicitation/create`).
 * The call fails at once with `AppCallError("input_required")` carrying a `PendingInput`; the MCP request
 * stays open at the App until someone answers (or the input deadline passes, which cancels it), and the
 * call's final outcome then arrives on `PendingInput.result`. Which call asked is decided by the
 * connection (see `AppConnection.elicit`): the request the transport names, never a guess among several.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { AppCallError, type AppCallResult } from "./errors";

export type InputAnswer =
  | { action: "accept"; content: Record<string, string | number | boolean | string[]> }
  | { action: "decline" }
  | { action: "cancel" };

export interface PendingInput {
  readonly id: string;
  readonly connectionId: string;
  readonly connectionName: string;
  /** MCP tool name and binding of the call that asked. */
  readonly tool: string;
  readonly binding: string;
  /** What the App asks, untrusted text from the App. */
  readonly message: string;
  /** JSON Schema (flat object of primitives) of the answer, as the App sent it. */
  readonly requestedSchema: Record<string, unknown>;
  readonly createdAt: number;
  /** After this the request is cancelled at the App (`{ action: "cancel" }`). */
  readonly expiresAt: number;
  readonly state: "pending" | "answered" | "expired";
  /**
   * Sends the person's answer to the App and resolves with the call's final outcome (rejects with an
   * AppCallError). Throws `invalid_arguments` if accepted content does not fit the schema (the request
   * stays pending), and an error if it was already answered or expired.
   */
  answer(answer: InputAnswer): Promise<AppCallResult>;
  /** The call's final outcome, once the input is answered or expired. */
  readonly result: Promise<AppCallResult>;
}

const validator = new AjvJsonSchemaValidator();

export interface InputRequestOptions {
  connectionId: string;
  connectionName: string;
  tool: string;
  binding: string;
  message: string;
  requestedSchema: Record<string, unknown>;
  inputTimeoutMs: number;
  result: Promise<AppCallResult>;
  /** Hands the answer to the waiting MCP request handler. */
  respond(answer: InputAnswer): void;
  /** Called once the answer is sent (or the request expired): re-arm the call's timeout. */
  onSettled(): void;
}

export class InputRequest implements PendingInput {
  readonly id = `input_${randomUUID()}`;
  readonly connectionId: string;
  readonly connectionName: string;
  readonly tool: string;
  readonly binding: string;
  readonly message: string;
  readonly requestedSchema: Record<string, unknown>;
  readonly createdAt = Date.now();
  readonly expiresAt: number;
  readonly result: Promise<AppCallResult>;
  state: "pending" | "answered" | "expired" = "pending";
  private readonly expiry: NodeJS.Timeout;

  constructor(private readonly options: InputRequestOptions) {
    this.connectionId = options.connectionId;
    this.connectionName = options.connectionName;
    this.tool = options.tool;
    this.binding = options.binding;
    this.message = options.message;
    this.requestedSchema = options.requestedSchema;
    this.expiresAt = this.createdAt + options.inputTimeoutMs;
    this.result = options.result;
    this.result.catch(() => undefined);
    this.expiry = setTimeout(() => this.settle("expired", { action: "cancel" }), options.inputTimeoutMs);
    this.expiry.unref();
  }

  async answer(answer: InputAnswer): Promise<AppCallResult> {
    if (this.state !== "pending") throw new AppCallError("unavailable", `This input request is ${this.state}.`);
    if (answer.action === "accept") {
      const problem = answerProblem(this.requestedSchema, answer.content);
      if (problem) throw new AppCallError("invalid_arguments", problem);
    }
    this.settle("answered", answer);
    return this.result;
  }

  /** Ends the request without an answer from a person (the call ended first). */
  dispose(): void {
    if (this.state === "pending") this.settle("expired", { action: "cancel" });
  }

  private settle(state: "answered" | "expired", answer: InputAnswer): void {
    if (this.state !== "pending") return;
    this.state = state;
    clearTimeout(this.expiry);
    this.options.respond(answer);
    this.options.onSettled();
  }
}

/** Why accepted content does not fit the App's requested schema (naming the field), or null when it fits. */
export function answerProblem(requestedSchema: Record<string, unknown>, content: unknown): string | null {
  let check: ReturnType<ReturnType<typeof validator.getValidator>>;
  try {
    check = validator.getValidator(requestedSchema as never)(content);
  } catch {
    return "The App's input schema cannot be checked.";
  }
  return check.valid ? null : `The answer does not fit the requested schema: ${check.errorMessage}`;
}

/**
 * The answer a schema's own defaults give (SEP-1034: a client applies `default` values): the fields
 * with a default of the right primitive type, the rest left for the person.
 */
export function defaultsOf(
  requestedSchema: Record<string, unknown>,
): Record<string, string | number | boolean | string[]> {
  const properties = (requestedSchema.properties ?? {}) as Record<string, { default?: unknown }>;
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [name, prop] of Object.entries(properties)) {
    const value = prop?.default;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) out[name] = value as string[];
  }
  return out;
}
