/**
 * One App operation on the wire: the request for a tool call, resource read or prompt (marked with our call
 * key, see CALL_META), an `input_required` result of 2026-07-28 told apart from a complete one, the
 * complete result shaped like a tool result, and the SDK's failures told apart by their shape.
 */
import "server-only";
import type {
  CallToolResult,
  Client,
  ElicitRequest,
  ElicitResult,
  StandardSchemaV1,
} from "@modelcontextprotocol/client";
import { AppCallError, type AppCallResult, type InputRequired } from "./errors";
import { TASKS_META } from "./tasks";
import { CALL_META } from "./transports";

export type Operation =
  /** `tasks`: the App may answer with a task (2026-07-28 Tasks extension, see tasks.ts). */
  | { kind: "tool"; name: string; args: Record<string, unknown>; tasks?: boolean }
  | { kind: "resource"; uri: string }
  | { kind: "prompt"; name: string; args?: Record<string, string> };

/** What a retried request carries after an `input_required` round (2026-07-28 MRTR). */
export interface RetryParams {
  inputResponses: Record<string, unknown>;
  requestState?: string;
}

export type { InputRequired };

export type ElicitParams = ElicitRequest["params"];

export const MAX_MESSAGE = 500;

export interface SendOptions {
  signal: AbortSignal;
  timeout: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** W3C trace context (`traceparent`, `tracestate`) put in `_meta` of the request, when tracing is on. */
  traceMeta?: { traceparent: string; tracestate?: string };
}

/**
 * The result check of a built-in App's tool call (`trusted` in `send`). Its server is our own code in
 * this process, and its McpServer has already checked the result against the tool's output schema
 * before sending it, so the client's second full parse (the era's result schema, then the output schema
 * again, for every call) is left out; only the shape the gateway reads is checked here: an object whose
 * `content` is a list.
 */
const TRUSTED_TOOL_RESULT: StandardSchemaV1<unknown, CallToolResult> = {
  "~standard": {
    version: 1,
    vendor: "openbot",
    validate: (value) =>
      typeof value === "object" && value !== null && Array.isArray((value as { content?: unknown }).content)
        ? { value: value as CallToolResult }
        : { issues: [{ message: "a tool result needs a content list" }] },
  },
};

/** `trusted`: a built-in App's connection (see TRUSTED_TOOL_RESULT). */
export function send(
  client: Client,
  op: Operation,
  options: SendOptions,
  key: string,
  retry?: RetryParams,
  trusted = false,
): Promise<unknown> {
  const { traceMeta, ...sdkOptions } = options;
  const _meta: Record<string, unknown> = { ...traceMeta, [CALL_META]: key };
  if (op.kind === "tool" && op.tasks) _meta[TASKS_META] = true;
  const more = retry ?? {};
  const requestOptions = { ...sdkOptions, allowInputRequired: true };
  switch (op.kind) {
    case "tool": {
      const params = { name: op.name, arguments: op.args, _meta, ...more };
      if (trusted) return client.request({ method: "tools/call", params }, TRUSTED_TOOL_RESULT, requestOptions);
      return client.callTool(params, requestOptions);
    }
    case "resource":
      return client.readResource({ uri: op.uri, _meta, ...more }, { ...requestOptions, cacheMode: "bypass" });
    case "prompt":
      return client.getPrompt({ name: op.name, arguments: op.args, _meta, ...more }, requestOptions);
  }
}

/** Rounds of `input_required` one call may take before it is given up. */
const MAX_INPUT_ROUNDS = 8;

/**
 * Sends the operation; while the App answers `input_required` (2026-07-28 MRTR), fulfils its requests
 * (`ask` shows an elicitation to a person, through the same card as `elicitation/create`; roots are
 * empty; sampling is not offered) and sends the request again with `inputResponses` and the server's
 * `requestState` echoed unchanged, once per round.
 */
export async function sendAnswering(
  client: Client,
  op: Operation,
  options: SendOptions,
  key: string,
  label: string,
  ask: (params: ElicitParams) => Promise<ElicitResult>,
): Promise<AppCallResult> {
  let retry: RetryParams | undefined;
  for (let round = 0; ; round += 1) {
    const raw = await send(client, op, options, key, retry);
    const asked = inputRequiredOf(raw);
    if (!asked) return shape(op, raw, label);
    if (round >= MAX_INPUT_ROUNDS)
      throw new AppCallError("tool_error", `${label} kept asking for input (${round} rounds); the call was given up.`);
    retry = {
      inputResponses: await fulfil(asked, label, ask),
      ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
    };
  }
}

async function fulfil(
  asked: InputRequired,
  label: string,
  ask: (params: ElicitParams) => Promise<ElicitResult>,
): Promise<Record<string, unknown>> {
  const responses: Record<string, unknown> = {};
  for (const [k, request] of Object.entries(asked.inputRequests)) {
    if (request.method === "elicitation/create") {
      const params = (request.params ?? {}) as ElicitParams;
      responses[k] =
        params.mode === "url" || !("requestedSchema" in params) ? { action: "decline" } : await ask(params);
    } else if (request.method === "roots/list") {
      responses[k] = { roots: [] };
    } else {
      throw new AppCallError(
        "tool_error",
        `${label} asked for ${request.method.slice(0, 60)}, which OpenBot does not offer.`,
      );
    }
  }
  return responses;
}

/** The `input_required` result of a 2026-07-28 server (the SDK hands it back in manual mode), else undefined. */
export function inputRequiredOf(raw: unknown): InputRequired | undefined {
  if (typeof raw !== "object" || raw === null || (raw as { resultType?: unknown }).resultType !== "input_required")
    return undefined;
  const { inputRequests, requestState } = raw as { inputRequests?: unknown; requestState?: unknown };
  const requests: InputRequired["inputRequests"] = {};
  if (typeof inputRequests === "object" && inputRequests !== null) {
    for (const [k, v] of Object.entries(inputRequests as Record<string, unknown>)) {
      if (typeof v === "object" && v !== null && typeof (v as { method?: unknown }).method === "string")
        requests[k] = v as { method: string; params?: unknown };
    }
  }
  return { inputRequests: requests, ...(typeof requestState === "string" ? { requestState } : {}) };
}

/** A JSON-RPC error the server answered with (by its shape: the SDK may be loaded once per module graph). */
export function isProtocolError(error: unknown): error is Error & { code: number } {
  return (
    error instanceof Error && error.name === "ProtocolError" && typeof (error as { code?: unknown }).code === "number"
  );
}

/** A failure of the SDK itself (timeout, closed connection, HTTP trouble), by its shape. */
export function isSdkError(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    (error.name === "SdkError" || error.name === "SdkHttpError") &&
    typeof (error as { code?: unknown }).code === "string"
  );
}

/** Tool results as sent; resource reads and prompts as `{ content, structuredContent }` like a tool result. */
export function shape(op: Operation, raw: unknown, label: string): AppCallResult {
  if (op.kind === "resource") {
    const { contents } = raw as { contents: unknown[] };
    return { content: contents.map((resource) => ({ type: "resource", resource })), structuredContent: { contents } };
  }
  if (op.kind === "prompt") {
    const { description, messages } = raw as { description?: string; messages: { content: unknown }[] };
    return {
      content: messages.map((m) => m.content),
      structuredContent: description === undefined ? { messages } : { description, messages },
    };
  }
  const result = raw as CallToolResult;
  if (result.isError) {
    const first = result.content.find((c) => c.type === "text");
    const text = first && first.type === "text" ? `: ${first.text.slice(0, MAX_MESSAGE)}` : ".";
    throw new AppCallError("tool_error", `${label} returned an error${text}`, result as AppCallResult);
  }
  return result as AppCallResult;
}

export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${message}${message.endsWith("fetch failed") ? socketCause(error) : ""}`.slice(0, MAX_MESSAGE);
}

/**
 * fetch's own words are only "fetch failed": what went wrong is in its cause chain (a socket error's code,
 * ECONNREFUSED or ENOTFOUND, and its message; else the deepest message, like undici's "bad port"), or "".
 */
function socketCause(error: unknown): string {
  let at = (error as { cause?: unknown } | null)?.cause;
  let said = "";
  for (let depth = 0; depth < 4 && at && typeof at === "object"; depth++) {
    const { code, message, cause } = at as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string") return ` (${code}${typeof message === "string" && message ? `: ${message}` : ""})`;
    if (typeof message === "string" && message && message !== "fetch failed") said = message;
    at = cause;
  }
  return said ? ` (${said})` : "";
}
