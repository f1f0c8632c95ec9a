/**
 * One live MCP connection: an SDK Client over the connection's transport, its tool/resource/prompt lists,
 * status, and reconnection with backoff (by default 0.5 s doubling to 30 s) after a failed start or a drop. Calls
 * always have a deadline of their own (an abort that does not rely on the SDK), fail fast while the
 * connection is not connected, and map every failure to an AppCallError. An App's question (elicitation)
 * goes to the call that asked it: the one the transport names, else the only call in flight.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  type Prompt,
  PromptListChangedNotificationSchema,
  type RequestId,
  type Resource,
  ResourceListChangedNotificationSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Policy } from "@/contracts/connections";
import { logEvent } from "../log";
import type { BuiltinHost } from "./builtin/host";
import { type InputAnswer, InputRequest } from "./elicitation";
import { AppCallError, type AppCallResult, isAppCallError } from "./errors";
import { CALL_META, type OpenedTransport, openTransport, type TransportConfig } from "./transports";

export type { Policy };
export type ConnectionStatus = "connected" | "connecting" | "failed" | "disabled";

export interface ConnectionRecord {
  id: string;
  name: string;
  transport: TransportConfig;
  enabled: boolean;
  policies: Record<string, Policy>;
  builtin: string | null;
  /** Set by an admin: whether its answers may carry someone else's instructions; null: the default. */
  untrustedContent: boolean | null;
  createdAt: number;
}

export interface ConnectionDeps {
  dataDir: string;
  builtin: BuiltinHost;
  connectTimeoutMs: number;
  inputTimeoutMs: number;
  /** Reconnect backoff: first delay, doubling up to the cap. */
  retryMinMs: number;
  retryMaxMs: number;
  /** Status or lists changed. */
  onChange(): void;
  /** An App asked a person for input during a call. */
  onInput(input: InputRequest): void;
}

export type Operation =
  | { kind: "tool"; name: string; args: Record<string, unknown> }
  | { kind: "resource"; uri: string }
  | { kind: "prompt"; name: string; args?: Record<string, string> };

interface Inflight {
  /** Marks the call's request (see CALL_META), so the transport can name the call an App's question belongs to. */
  key: string;
  binding: string;
  tool: string;
  input?: InputRequest;
  /** Fails the caller's promise with input_required (the call itself goes on). */
  askInput(input: InputRequest): void;
  /** Restarts the call's own deadline (after a person answered). */
  rearm(): void;
  disarm(): void;
  result: Promise<AppCallResult>;
}

const MAX_LIST_PAGES = 20;
const MAX_MESSAGE = 500;

export class AppConnection {
  status: ConnectionStatus = "connecting";
  error?: string;
  tools: Tool[] = [];
  resources: Resource[] = [];
  prompts: Prompt[] = [];
  /** The server advertises resources (so `read_resource` is offered). */
  hasResources = false;
  private client?: Client;
  private opened?: OpenedTransport;
  private generation = 0;
  private attempt = 0;
  private retryTimer?: NodeJS.Timeout;
  private refreshTimer?: NodeJS.Timeout;
  private readonly inflight = new Map<string, Inflight>();

  constructor(
    public record: ConnectionRecord,
    private readonly deps: ConnectionDeps,
  ) {}

  /** Connects if enabled; resolves after the first attempt (success or failure). */
  async start(): Promise<void> {
    if (!this.record.enabled) {
      this.status = "disabled";
      return;
    }
    await this.connect();
  }

  /** Stops the client (and its child process); the connection stays `disabled` until started again. */
  async stop(): Promise<void> {
    this.generation += 1;
    clearTimeout(this.retryTimer);
    clearTimeout(this.refreshTimer);
    this.retryTimer = undefined;
    for (const call of this.inflight.values()) call.input?.dispose();
    const client = this.client;
    this.client = undefined;
    this.opened = undefined;
    this.status = "disabled";
    this.error = undefined;
    await client?.close().catch(() => undefined);
  }

  /** The stdio child's process id, if any (diagnostics and tests). */
  pid(): number | null {
    return this.opened?.pid() ?? null;
  }

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.status = "connecting";
    this.deps.onChange();
    let opened: OpenedTransport | undefined;
    const client = new Client({ name: "openbot", version: "0.1.0" }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      this.elicit(gen, request.params, opened, extra.requestId),
    );
    for (const schema of [
      ToolListChangedNotificationSchema,
      ResourceListChangedNotificationSchema,
      PromptListChangedNotificationSchema,
    ]) {
      client.setNotificationHandler(schema, () => this.refreshSoon(gen));
    }
    let ready = false;
    client.onclose = () => {
      if (ready) this.fail(gen, `The server closed the connection.${this.stderrNote(opened)}`);
    };
    // The HTTP client transport reports a stream it could not resume only through onerror; the request
    // would otherwise wait for its deadline.
    client.onerror = (error) => {
      if (ready && /Maximum reconnection attempts|Failed to reconnect/.test(error.message)) {
        this.fail(gen, `The server could not be reached: ${describe(error)}`);
      }
    };
    try {
      opened = openTransport(this.record.transport, {
        connectionId: this.record.id,
        dataDir: this.deps.dataDir,
        builtin: this.deps.builtin,
      });
      await client.connect(opened.transport, { timeout: this.deps.connectTimeoutMs });
      if (gen !== this.generation) {
        await client.close().catch(() => undefined);
        return;
      }
      ready = true;
      this.client = client;
      this.opened = opened;
      await this.refresh(gen, client);
      if (gen !== this.generation) return;
      this.status = "connected";
      this.error = undefined;
      this.attempt = 0;
      this.deps.onChange();
    } catch (error) {
      if (gen !== this.generation) return;
      this.fail(gen, `${describe(error)}${this.stderrNote(opened)}`);
      await client.close().catch(() => undefined);
    }
  }

  /** Marks the connection failed, drops its client and schedules a reconnect with backoff. */
  private fail(gen: number, message: string): void {
    if (gen !== this.generation) return;
    this.generation += 1;
    const client = this.client;
    this.client = undefined;
    this.opened = undefined;
    void client?.close().catch(() => undefined);
    this.status = "failed";
    this.error = message.slice(0, 1000);
    const delay = Math.min(this.deps.retryMinMs * 2 ** Math.min(this.attempt, 30), this.deps.retryMaxMs);
    this.attempt += 1;
    clearTimeout(this.retryTimer);
    const retryGen = this.generation;
    this.retryTimer = setTimeout(() => {
      if (retryGen === this.generation) void this.connect();
    }, delay);
    this.retryTimer.unref();
    this.deps.onChange();
  }

  private stderrNote(opened: OpenedTransport | undefined): string {
    const tail = opened?.stderrTail().slice(-300);
    return tail ? ` Its last output: ${tail}` : "";
  }

  private refreshSoon(gen: number): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      const client = this.client;
      if (gen !== this.generation || !client) return;
      this.refresh(gen, client).then(
        () => this.deps.onChange(),
        (error: unknown) => this.fail(gen, `Listing the server's capabilities failed: ${describe(error)}`),
      );
    }, 100);
    this.refreshTimer.unref();
  }

  private async refresh(gen: number, client: Client): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    const timeout = this.deps.connectTimeoutMs;
    const tools = caps.tools
      ? await paginate(
          (cursor) => client.listTools({ cursor }, { timeout }),
          (r) => r.tools,
        )
      : [];
    const resources = caps.resources
      ? await paginate(
          (cursor) => client.listResources({ cursor }, { timeout }),
          (r) => r.resources,
        )
      : [];
    const prompts = caps.prompts
      ? await paginate(
          (cursor) => client.listPrompts({ cursor }, { timeout }),
          (r) => r.prompts,
        )
      : [];
    if (gen !== this.generation) return;
    this.tools = tools;
    this.resources = resources;
    this.prompts = prompts;
    this.hasResources = Boolean(caps.resources);
  }

  /**
   * Runs one operation with a deadline. Fails fast with `unavailable` unless connected; an elicitation
   * from the App fails the returned promise with `input_required` while the call goes on.
   */
  call(op: Operation, opts: { timeoutMs: number; signal?: AbortSignal; binding: string }): Promise<AppCallResult> {
    const client = this.client;
    const gen = this.generation;
    const label = opts.binding;
    if (this.status !== "connected" || !client) {
      return Promise.reject(
        new AppCallError("unavailable", `${this.record.name} is not available now (${this.status}).`),
      );
    }
    if (opts.signal?.aborted)
      return Promise.reject(new AppCallError("unavailable", "The call was cancelled before it was sent."));
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const disarm = () => clearTimeout(timer);
    const arm = (ms: number) => {
      disarm();
      timer = setTimeout(
        () => controller.abort(new AppCallError("timeout", `${label} did not answer within ${ms} ms.`)),
        ms,
      );
    };
    const onCallerAbort = () => controller.abort(new AppCallError("unavailable", "The call was cancelled."));
    opts.signal?.addEventListener("abort", onCallerAbort, { once: true });
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
    });
    // The SDK's own deadline is a backstop far beyond ours (it must outlive a wait for a person's input).
    const requestOptions = { signal: controller.signal, timeout: opts.timeoutMs + this.deps.inputTimeoutMs + 60_000 };
    const key = randomUUID();
    const sent = send(client, op, requestOptions, key).then((raw) => shape(op, raw, label));
    let record: Inflight | undefined;
    const result = Promise.race([sent, aborted])
      .catch((error: unknown) => {
        throw this.mapError(gen, error, label);
      })
      .finally(() => {
        disarm();
        opts.signal?.removeEventListener("abort", onCallerAbort);
        if (record) this.inflight.delete(record.key);
        record?.input?.dispose();
      });
    result.catch(() => undefined);
    arm(opts.timeoutMs);
    return new Promise<AppCallResult>((resolve, reject) => {
      record = {
        key,
        binding: opts.binding,
        tool: op.kind === "tool" ? op.name : op.kind === "resource" ? "resources/read" : "prompts/get",
        askInput: (input) =>
          reject(
            new AppCallError(
              "input_required",
              `${label} is waiting for input from a person (${input.id}).`,
              undefined,
              input,
            ),
          ),
        rearm: () => arm(opts.timeoutMs),
        disarm,
        result,
      };
      this.inflight.set(key, record);
      result.then(resolve, reject);
    });
  }

  private mapError(gen: number, error: unknown, label: string): AppCallError {
    if (isAppCallError(error)) return error;
    if (isMcpError(error)) {
      if (error.code === ErrorCode.RequestTimeout)
        return new AppCallError("timeout", `${label} did not answer in time.`);
      if (error.code === ErrorCode.ConnectionClosed) {
        this.fail(gen, "The connection closed.");
        return new AppCallError("unavailable", `${this.record.name} closed the connection during the call.`);
      }
      return new AppCallError("tool_error", `${label} failed: ${error.message.slice(0, MAX_MESSAGE)}`);
    }
    this.fail(gen, `The server could not be reached: ${describe(error)}`);
    return new AppCallError("unavailable", `${this.record.name} could not be reached.`);
  }

  /**
   * An elicitation from the App, handed to the call that asked it: the one the transport names (Streamable
   * HTTP: the request on whose stream it came), else the only call in flight. When several calls are in
   * flight and the transport cannot say (stdio), it is cancelled rather than shown under the wrong call.
   */
  private elicit(
    gen: number,
    params: ElicitRequest["params"],
    opened: OpenedTransport | undefined,
    requestId: RequestId,
  ): Promise<ElicitResult> {
    if (gen !== this.generation || params.mode === "url" || !("requestedSchema" in params))
      return Promise.resolve({ action: "decline" });
    const named = opened?.askedBy(requestId);
    const waiting = [...this.inflight.values()].filter((c) => !c.input);
    const call = named !== undefined ? this.inflight.get(named) : waiting.length === 1 ? waiting[0] : undefined;
    if (!call || call.input) {
      logEvent("app_input_unattributed", { connectionId: this.record.id, inFlight: this.inflight.size });
      return Promise.resolve({ action: "cancel" });
    }
    let respond: (answer: InputAnswer) => void = () => undefined;
    const answered = new Promise<ElicitResult>((resolve) => {
      respond = (answer) => resolve(answer);
    });
    call.disarm();
    const input = new InputRequest({
      connectionId: this.record.id,
      connectionName: this.record.name,
      tool: call.tool,
      binding: call.binding,
      message: String(params.message).slice(0, 4000),
      requestedSchema: params.requestedSchema as Record<string, unknown>,
      inputTimeoutMs: this.deps.inputTimeoutMs,
      result: call.result,
      respond,
      onSettled: () => call.rearm(),
    });
    call.input = input;
    call.askInput(input);
    this.deps.onInput(input);
    return answered;
  }
}

function send(
  client: Client,
  op: Operation,
  options: { signal: AbortSignal; timeout: number },
  key: string,
): Promise<unknown> {
  const _meta = { [CALL_META]: key };
  switch (op.kind) {
    case "tool":
      return client.callTool({ name: op.name, arguments: op.args, _meta }, undefined, options);
    case "resource":
      return client.readResource({ uri: op.uri, _meta }, options);
    case "prompt":
      return client.getPrompt({ name: op.name, arguments: op.args, _meta }, options);
  }
}

/** An MCP protocol error (by its shape: the SDK may be loaded once per module graph). */
function isMcpError(error: unknown): error is Error & { code: number } {
  return error instanceof Error && error.name === "McpError" && typeof (error as { code?: unknown }).code === "number";
}

/** Tool results as sent; resource reads and prompts as `{ content, structuredContent }` like a tool result. */
function shape(op: Operation, raw: unknown, label: string): AppCallResult {
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

async function paginate<R extends { nextCursor?: string }, T>(
  page: (cursor?: string) => Promise<R>,
  items: (r: R) => T[],
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_LIST_PAGES; i += 1) {
    const r = await page(cursor);
    all.push(...items(r));
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return all;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, MAX_MESSAGE);
}
