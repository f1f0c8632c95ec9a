/**
 * MCP Tasks (the 2026-07-28 extension `io.modelcontextprotocol/tasks`, SEP-2663) on the client side.
 * A program's tool call declares the extension in its request's own client capabilities; the App may
 * then answer with a task handle (`resultType: "task"`) instead of the result, and the result is fetched
 * later with `tasks/get` (which inlines it once the task is completed); `tasks/update` brings answers to
 * a task that is `input_required`; `tasks/cancel` stops it.
 *
 * The v2 SDK (2.4.0) has no task runtime: its client rejects a `resultType: "task"` answer as an
 * unsupported result type and keeps nothing of it. So the transport (transports.ts, `CallMarks`) adds the
 * extension to the requests we mark, takes a task answer out of the stream before the SDK decodes it
 * (`TaskCapture`), and hands the SDK an empty complete result in its place; the connection then finds
 * the task under the call's key. Only answers to requests we marked are taken, so an App cannot make an
 * ordinary call look like a task. The older (2025-11-25) core tasks are not offered: the SDK has no
 * runtime for them either, and a server on that revision never sees the extension.
 */
import "server-only";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** `params._meta` key with which a connection marks a request that may be answered with a task (taken out before sending). */
export const TASKS_META = "dev.openbot/tasks";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const MAX_TRACKED = 10_000;
const MAX_STATUS_MESSAGE = 500;

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** One task as the App last described it (its status message is untrusted text). */
export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  pollIntervalMs?: number;
  ttlMs?: number | null;
  /** The final result (a CallToolResult), for `completed`. */
  result?: Record<string, unknown>;
  /** The JSON-RPC error, for `failed`. */
  error?: { code?: number; message: string };
  /** What the App asks, for `input_required` (MRTR shape: one request per key). */
  inputRequests?: Record<string, { method: string; params?: unknown }>;
}

const TaskShape = z.looseObject({
  taskId: z.string().min(1).max(1000),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string().optional(),
  pollIntervalMs: z.number().nonnegative().optional(),
  ttlMs: z.number().nullable().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }).optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});

/** The result schema of `tasks/get` (the SDK's request() wants one for extension methods). */
export const GetTaskResultSchema = TaskShape;
/** `tasks/update` and `tasks/cancel` answer with an (ignored) result. */
export const TaskAckSchema = z.looseObject({});

/** A task as the App sent it (in a `resultType: "task"` answer or a `tasks/get` result), else undefined. */
export function taskOf(raw: unknown): TaskState | undefined {
  const parsed = TaskShape.safeParse(raw);
  if (!parsed.success) return undefined;
  const t = parsed.data;
  const state: TaskState = { taskId: t.taskId, status: t.status };
  if (t.statusMessage !== undefined) state.statusMessage = t.statusMessage.slice(0, MAX_STATUS_MESSAGE);
  if (t.pollIntervalMs !== undefined) state.pollIntervalMs = t.pollIntervalMs;
  if (t.ttlMs !== undefined) state.ttlMs = t.ttlMs;
  if (t.status === "completed") {
    const { resultType: _type, ...result } = t.result ?? {};
    state.result = { content: [], ...result };
  }
  if (t.status === "failed")
    state.error = {
      ...(t.error?.code !== undefined ? { code: t.error.code } : {}),
      message: String(t.error?.message ?? t.statusMessage ?? "The task failed.").slice(0, MAX_STATUS_MESSAGE),
    };
  if (t.status === "input_required") {
    const requests: NonNullable<TaskState["inputRequests"]> = {};
    for (const [k, v] of Object.entries(t.inputRequests ?? {})) {
      if (typeof v === "object" && v !== null && typeof (v as { method?: unknown }).method === "string")
        requests[k] = v as { method: string; params?: unknown };
    }
    state.inputRequests = requests;
  }
  return state;
}

/**
 * The transport's part (see the top): marked requests declare the extension; a task answer to one of
 * them is kept by the request's JSON-RPC id and replaced with an empty complete result for the SDK.
 */
export class TaskCapture {
  private readonly marked = new Set<string>();
  private readonly taken = new Map<string, TaskState>();

  /** A request marked with TASKS_META: the marker goes, the extension is declared in its client capabilities. */
  outbound(message: JSONRPCMessage): JSONRPCMessage {
    if (!("method" in message) || !("id" in message)) return message;
    const meta = message.params?._meta as Record<string, unknown> | undefined;
    if (!meta || !(TASKS_META in meta)) return message;
    const { [TASKS_META]: wanted, ...rest } = meta;
    const caps = rest[CLIENT_CAPABILITIES];
    // Only a 2026-07-28 request carries per-request capabilities: elsewhere nothing is declared.
    if (wanted === true && typeof caps === "object" && caps !== null) {
      const extensions = { ...((caps as { extensions?: Record<string, unknown> }).extensions ?? {}) };
      extensions[TASKS_EXTENSION] = {};
      rest[CLIENT_CAPABILITIES] = { ...caps, extensions };
      this.marked.add(String(message.id));
      if (this.marked.size > MAX_TRACKED) this.marked.delete(this.marked.values().next().value!);
    }
    return { ...message, params: { ...message.params, _meta: rest } };
  }

  /** A task answer to a marked request: kept, and the SDK gets an empty complete result. */
  inbound(message: JSONRPCMessage): JSONRPCMessage {
    if (!("id" in message) || !("result" in message) || "method" in message) return message;
    const id = String(message.id);
    if (!this.marked.delete(id)) return message;
    const result = message.result as { resultType?: unknown };
    if (result?.resultType !== "task") return message;
    const task = taskOf(result);
    if (!task) return message;
    this.taken.set(id, task);
    if (this.taken.size > MAX_TRACKED) this.taken.delete(this.taken.keys().next().value!);
    return { ...message, result: { resultType: "complete", content: [] } };
  }

  /** The task the App answered request `requestId` with, once (undefined: it answered with a result). */
  take(requestId: string): TaskState | undefined {
    const task = this.taken.get(requestId);
    this.taken.delete(requestId);
    return task;
  }
}

const validator = new AjvJsonSchemaValidator();

/**
 * Why a person's answer to a task's question does not fit the form the App asked for (checked before it
 * is sent with `tasks/update`, as for an elicitation), or null when it fits. Only an accepted answer has content.
 */
export function taskAnswerProblem(
  requestedSchema: unknown,
  answer: { action: string; content?: unknown },
): string | null {
  if (answer.action !== "accept") return null;
  try {
    const check = validator.getValidator(requestedSchema as never)(answer.content);
    return check.valid ? null : `The answer does not fit the requested schema: ${check.errorMessage}`;
  } catch {
    return "The App's input schema cannot be checked.";
  }
}
