/**
 * One live MCP connection: an SDK Client (v2, `@modelcontextprotocol/client`) over the connection's
 * transport, its tool/resource/prompt lists, status, and reconnection with backoff (by default 0.5 s
 * doubling to 30 s) after a failed start or a drop. The protocol revision is chosen by what the server
 * supports: `server/discover` first (2026-07-28, stateless, per-request `_meta`), else the `initialize`
 * handshake of 2025-11-25 / 2025-06-18. Lists are kept until the server says they changed or their
 * `ttlMs` passes. Calls always have a deadline of their own (an abort that does not rely on the SDK),
 * fail fast while the connection is not connected, and map every failure to an AppCallError. An App's
 * question goes to the call that asked it: on 2026-07-28 it comes back as that call's `input_required`
 * result (see `mrtr.ts`); on older revisions as `elicitation/create`, to the call the transport names,
 * else the only call in flight.
 *
 * Over 400 lines on purpose: one connection's lifecycle (connect, lists, reconnect, calls with their
 * deadlines, questions routed to the call that asked) shares its generation counter and in-flight map;
 * sending and result shaping are in calls.ts.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import {
  Client,
  type ElicitResult,
  type Prompt,
  type RequestId,
  type Resource,
  type Tool,
} from "@modelcontextprotocol/client";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Policy } from "@/contracts/connections";
import { logEvent } from "../log";
import type { BuiltinHost } from "./builtin/host";
import {
  describe,
  type ElicitParams,
  inputRequiredOf,
  isProtocolError,
  isSdkError,
  MAX_MESSAGE,
  type Operation,
  type RetryParams,
  type SendOptions,
  send,
  sendAnswering,
  shape,
} from "./calls";
import { type InputAnswer, InputRequest } from "./elicitation";
import { AppCallError, type AppCallResult, isAppCallError } from "./errors";
import { isOAuthFlowError } from "./oauth/errors";
import { GetTaskResultSchema, TaskAckSchema, type TaskState, taskOf } from "./tasks";
import { type OpenedTransport, openTransport, type TransportConfig } from "./transports";

/** A connection's error while it waits for someone to sign in (a member is shown it too: they can act on it). */
export const SIGN_IN_FIRST = "Sign in to this App first.";

/** `message` and a note after it as two sentences ("Connection closed. Its last output: …"). */
const withNote = (message: string, note: string): string =>
  note ? `${message.replace(/[.\s]*$/, ".")}${note}` : message;

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
  /** The authorizing fetch of an OAuth-protected http connection (see oauth/manager.ts). */
  authorize?: (base: FetchLike) => FetchLike;
}

export type { Operation } from "./calls";

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
  private ttlTimer?: NodeJS.Timeout;
  /** The shortest `ttlMs` the server gave its lists, if any (they are listed again after it). */
  listTtlMs?: number;
  private readonly inflight = new Map<string, Inflight>();
  /** The last attempt failed because nobody is signed in (OAuth). */
  authRequired = false;
  private probing = false;

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
    clearTimeout(this.ttlTimer);
    this.retryTimer = undefined;
    for (const call of this.inflight.values()) call.input?.dispose();
    const client = this.client;
    this.client = undefined;
    this.opened = undefined;
    this.status = "disabled";
    this.error = undefined;
    await client?.close().catch(() => undefined);
  }

  /** The protocol revision agreed with the server, once connected. */
  protocolVersion(): string | undefined {
    return this.client?.getNegotiatedProtocolVersion();
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
    const client = new Client(
      { name: "openbot", version: "0.1.0" },
      {
        capabilities: { elicitation: { form: {}, url: {} } },
        // 2026-07-28 when the server answers `server/discover`, else the 2025 `initialize` handshake.
        // Over HTTP a probe that times out is an outage, so it gets the whole connect deadline; over stdio
        // silence means an older server (the SDK falls back), so a short wait is enough.
        // The built-in apps are this repo's own 2025-11-25 servers: no probe for them.
        versionNegotiation: {
          mode: this.record.transport.type === "builtin" ? "legacy" : "auto",
          probe: {
            timeoutMs:
              this.record.transport.type === "stdio" || this.record.transport.type === "preset"
                ? Math.min(this.deps.connectTimeoutMs, 5000)
                : this.deps.connectTimeoutMs,
          },
        },
        // An `input_required` result comes back to `call` (a person answers it, maybe much later).
        inputRequired: { autoFulfill: false },
      },
    );
    client.setRequestHandler("elicitation/create", (request, ctx) =>
      this.elicit(gen, request.params, opened, ctx.mcpReq.id),
    );
    for (const method of [
      "notifications/tools/list_changed",
      "notifications/resources/list_changed",
      "notifications/prompts/list_changed",
    ] as const) {
      client.setNotificationHandler(method, () => this.refreshSoon(gen));
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
        authorize: this.deps.authorize,
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
      this.authRequired = false;
      this.attempt = 0;
      this.deps.onChange();
    } catch (error) {
      if (gen !== this.generation) return;
      this.authRequired = isAuthRequired(error);
      this.fail(gen, this.authRequired ? SIGN_IN_FIRST : withNote(describe(error), this.stderrNote(opened)));
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

  /**
   * Lists tools, resources and prompts (every page; the SDK caps the walk). Each list is kept until the
   * server says it changed, or, when the server gave a `ttlMs`, until the shortest of them passes: then
   * it is listed again (with a floor of one second, so a tiny ttl cannot become a busy loop).
   */
  private async refresh(gen: number, client: Client): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    const options = { timeout: this.deps.connectTimeoutMs, cacheMode: "refresh" as const };
    const [tools, resources, prompts] = await Promise.all([
      caps.tools ? client.listTools(undefined, options) : undefined,
      caps.resources ? client.listResources(undefined, options) : undefined,
      caps.prompts ? client.listPrompts(undefined, options) : undefined,
    ]);
    if (gen !== this.generation) return;
    this.tools = tools?.tools ?? [];
    this.resources = resources?.resources ?? [];
    this.prompts = prompts?.prompts ?? [];
    this.hasResources = Boolean(caps.resources);
    const ttls = [tools, resources, prompts]
      .map((r) => (r as { ttlMs?: unknown } | undefined)?.ttlMs)
      .filter((t): t is number => typeof t === "number" && Number.isFinite(t) && t > 0);
    this.listTtlMs = ttls.length ? Math.min(...ttls) : undefined;
    clearTimeout(this.ttlTimer);
    if (this.listTtlMs !== undefined) {
      this.ttlTimer = setTimeout(() => this.refreshSoon(gen), Math.min(Math.max(this.listTtlMs, 1000), 86_400_000));
      this.ttlTimer.unref();
    }
  }

  /**
   * Runs one operation with a deadline. Fails fast with `unavailable` unless connected; an elicitation
   * from the App fails the returned promise with `input_required` while the call goes on.
   * `inputRequired: "return"`: a 2026-07-28 `input_required` result is not asked in memory but rejects
   * the call with `AppCallError("input_required")` carrying it (`asked`: the requests and requestState),
   * so the caller can park durably; `retry` sends the request again with the person's `inputResponses`
   * and the server's `requestState` unchanged.
   */
  call(
    op: Operation,
    opts: {
      timeoutMs: number;
      /**
       * Registers a function that cancels this call (a run's end, run-app-calls.ts); the returned one is
       * called when the call is over. A plain function, not an AbortSignal: a signal and its listener per
       * call were a measurable share of a nested call's main-thread CPU.
       */
      onCancel?: (cancel: () => void) => () => void;
      binding: string;
      onProgress?: SendOptions["onprogress"];
      inputRequired?: "ask" | "return";
      retry?: RetryParams;
      traceMeta?: SendOptions["traceMeta"];
    },
  ): Promise<AppCallResult> {
    const client = this.client;
    const gen = this.generation;
    const label = opts.binding;
    if (this.status !== "connected" || !client) {
      return Promise.reject(
        new AppCallError("unavailable", `${this.record.name} is not available now (${this.status}).`),
      );
    }
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
    const unhook = opts.onCancel?.(onCallerAbort);
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
    });
    // The SDK's own deadline is a backstop far beyond ours (it must outlive a wait for a person's input).
    const requestOptions: SendOptions = {
      signal: controller.signal,
      timeout: opts.timeoutMs + this.deps.inputTimeoutMs + 60_000,
      ...(opts.onProgress ? { onprogress: opts.onProgress } : {}),
      ...(opts.traceMeta ? { traceMeta: opts.traceMeta } : {}),
    };
    const key = randomUUID();
    let record: Inflight | undefined;
    const opened = this.opened;
    // A call that allowed a task may have been answered with one (tasks.ts): its result comes later.
    const unlessTask = (result: AppCallResult): AppCallResult => {
      const task = op.kind === "tool" && op.tasks ? opened?.takeTask(key) : undefined;
      if (!task) return result;
      throw new AppCallError("task_started", `${label} runs as task ${task.taskId}.`, undefined, undefined, { task });
    };
    const sent = (
      opts.inputRequired === "return"
        ? send(client, op, requestOptions, key, opts.retry, this.record.transport.type === "builtin").then((raw) => {
            const asked = inputRequiredOf(raw);
            if (!asked) return shape(op, raw, label);
            throw new AppCallError("input_required", `${label} asks for input.`, undefined, undefined, { asked });
          })
        : sendAnswering(client, op, requestOptions, key, label, (params) => {
            if (!record) throw new AppCallError("unavailable", `${label} asked for input before it was tracked.`);
            return this.ask(record, params);
          })
    ).then(unlessTask);
    const result = Promise.race([sent, aborted])
      .catch((error: unknown) => {
        throw this.mapError(gen, error, label);
      })
      .finally(() => {
        disarm();
        unhook?.();
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

  /**
   * One request about a task this App created (tasks.ts): `get` its state (with the result once it is
   * completed), `update` it with answers to its questions, `cancel` it. Failures are AppCallErrors.
   */
  async task(
    action: { type: "get" } | { type: "cancel" } | { type: "update"; inputResponses: Record<string, unknown> },
    taskId: string,
    timeoutMs: number,
  ): Promise<TaskState | undefined> {
    const client = this.client;
    const gen = this.generation;
    const label = `${this.record.name} task ${taskId.slice(0, 100)}`;
    if (this.status !== "connected" || !client)
      throw new AppCallError("unavailable", `${this.record.name} is not available now (${this.status}).`);
    const options = { timeout: timeoutMs };
    try {
      if (action.type === "get") {
        const raw = await client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema, options);
        const task = taskOf(raw);
        if (!task || task.taskId !== taskId)
          throw new AppCallError(
            "tool_error",
            `${label}: the App answered tasks/get with something that is not this task.`,
          );
        return task;
      }
      if (action.type === "cancel") {
        await client.request({ method: "tasks/cancel", params: { taskId } }, TaskAckSchema, options);
        return undefined;
      }
      await client.request(
        { method: "tasks/update", params: { taskId, inputResponses: action.inputResponses } },
        TaskAckSchema,
        options,
      );
      return undefined;
    } catch (error) {
      throw this.mapError(gen, error, label);
    }
  }

  private mapError(gen: number, error: unknown, label: string): AppCallError {
    if (isAppCallError(error)) return error;
    if (isAuthRequired(error))
      return new AppCallError("auth_required", `${label} needs a sign-in to ${this.record.name}: Connect it first.`);
    if (isSdkError(error)) {
      if (error.code === "REQUEST_TIMEOUT") return new AppCallError("timeout", `${label} did not answer in time.`);
      if (error.code === "CONNECTION_CLOSED" || error.code === "NOT_CONNECTED" || error.code === "SEND_FAILED") {
        this.fail(gen, "The connection closed.");
        return new AppCallError("unavailable", `${this.record.name} closed the connection during the call.`);
      }
      if (!error.code.startsWith("CLIENT_HTTP"))
        return new AppCallError("tool_error", `${label} failed: ${error.message.slice(0, MAX_MESSAGE)}`);
    }
    if (isProtocolError(error))
      return new AppCallError("tool_error", `${label} failed: ${error.message.slice(0, MAX_MESSAGE)}`);
    // One request that could not be delivered (a slow connect, a reset socket) fails that call only; the
    // connection is marked failed only if the App does not answer a ping either.
    this.probe(gen, describe(error));
    return new AppCallError("unavailable", `${this.record.name} could not be reached.`);
  }

  /** Pings the App once (one probe at a time); no answer within the connect timeout fails the connection. */
  private probe(gen: number, cause: string): void {
    const client = this.client;
    if (this.probing || gen !== this.generation || !client) return;
    this.probing = true;
    client
      .ping({ timeout: this.deps.connectTimeoutMs })
      .then(
        () => logEvent("app_call_transport_error", { connectionId: this.record.id, error: cause, alive: true }),
        (error: unknown) =>
          this.fail(gen, `The server could not be reached: ${cause} (and a ping failed: ${describe(error)})`),
      )
      .finally(() => {
        this.probing = false;
      });
  }

  /**
   * An elicitation from the App, handed to the call that asked it: the one the transport names (Streamable
   * HTTP: the request on whose stream it came), else the only call in flight. When several calls are in
   * flight and the transport cannot say (stdio), it is cancelled rather than shown under the wrong call.
   */
  private elicit(
    gen: number,
    params: ElicitParams,
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
    return this.ask(call, params);
  }

  /** Shows an App's question to a person under the call that asked it; resolves with their answer. */
  private ask(call: Inflight, params: ElicitParams & { requestedSchema?: unknown }): Promise<ElicitResult> {
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

/** Nobody is signed in to the OAuth App (the transport's fetch says so; the SDK may wrap it once). */
function isAuthRequired(error: unknown): boolean {
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  return [error, cause].some((e) => isOAuthFlowError(e) && e.reason === "auth_required");
}
