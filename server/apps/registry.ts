/**
 * The App registry: one per process. It serves the built-in apps, keeps one live MCP connection per row
 * of `connections`, turns their tools, resources and prompts into bindings (`work_calendar.list_events`)
 * with a policy each, validates arguments against the tool's input schema before anything is sent, and
 * calls the App with a deadline. Admin changes (add, rename, enable, remove, policies) are persisted and
 * take effect at once.
 *
 * Over 400 lines on purpose: it is one class whose methods share the live connection map and the catalog
 * rebuilt from it; the catalog, argument checks, rows and types already live in their own files.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { policiesPatchSchema } from "@/contracts/connections";
import { ArgumentChecker } from "./arguments";
import { buildCatalog, untrustedConnection } from "./bindings";
import { type BuiltinHost, startBuiltinHost } from "./builtin/host";
import type { RetryParams, SendOptions } from "./calls";
import { AppConnection, type ConnectionDeps, type ConnectionRecord, type Operation, type Policy } from "./connection";
import type { InputRequest, PendingInput } from "./elicitation";
import { AppCallError, type AppCallResult, ConnectionConfigError } from "./errors";
import { type OAuthTarget, SHARED } from "./oauth/manager";
import { oauthTarget, PersonalConnections } from "./oauth/personal";
import { type ConnectionRow, parseName, storedTransport, toRecord } from "./records";
import { slugify } from "./slug";
import type { TaskState } from "./tasks";
import { hideTransportSecrets, parseTransport, redactTransport, type TransportConfig } from "./transports";
import type { AppProgress, AppRegistryOptions, ConnectionView, ToolEntry } from "./types";

export { defaultPolicy } from "./bindings";
export type { RetryParams } from "./calls";
export type { ConnectionStatus, Policy } from "./connection";
export type { InputAnswer, PendingInput } from "./elicitation";
export { answerProblem } from "./elicitation";
export type { AppCallFailure, AppCallResult, InputRequired } from "./errors";
export { AppCallError, ConnectionConfigError, isAppCallError, isConnectionConfigError } from "./errors";
export type { TaskState, TaskStatus } from "./tasks";
export { taskAnswerProblem } from "./tasks";
export type { TransportConfig } from "./transports";
export type { AppProgress, AppRegistryOptions, ConnectionView, ToolEntry } from "./types";

export class AppRegistry {
  private readonly conns = new Map<string, AppConnection>();
  private entries: ToolEntry[] = [];
  private byBinding = new Map<string, ToolEntry>();
  private slugs = new Map<string, string>();
  private warnings = new Map<string, string[]>();
  private readonly inputs = new Map<string, InputRequest>();
  private readonly checker = new ArgumentChecker();
  private readonly callTimeoutMs: number;
  private readonly personal?: PersonalConnections;
  private closed = false;

  private constructor(
    private readonly options: AppRegistryOptions,
    private readonly builtin: BuiltinHost,
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? 30_000;
    if (options.oauth)
      this.personal = new PersonalConnections(options.oauth, (authorize) => ({
        ...this.deps(),
        onChange: () => undefined,
        authorize,
      }));
  }

  /** Starts the built-in apps' server and connects every enabled connection (waits for first attempts). */
  static async start(options: AppRegistryOptions): Promise<AppRegistry> {
    const builtin = await startBuiltinHost(options.db);
    const registry = new AppRegistry(options, builtin);
    try {
      const rows = await options.db.query<ConnectionRow>("select * from connections order by created_at, id");
      await sealOlderRows(options, rows);
      for (const row of rows) registry.conns.set(row.id, registry.make(toRecord(row, options.box)));
      registry.rebuild();
      await Promise.all([...registry.conns.values()].map((c) => c.start()));
      registry.rebuild();
      return registry;
    } catch (error) {
      await registry.close();
      throw error;
    }
  }

  /** Every binding of connected (or briefly failed) connections, by connection creation order then name. */
  tools(): ToolEntry[] {
    return [...this.entries];
  }

  /**
   * What programs and the model may see and call: every binding except `deny` ones (a denied tool is
   * absent from `apps`, the declarations, the discovery index and the model's direct tools).
   */
  catalog(): ToolEntry[] {
    return this.entries.filter((e) => e.policy !== "deny");
  }

  resolve(binding: string): ToolEntry | undefined {
    return this.byBinding.get(binding);
  }

  /**
   * Why `args` cannot be sent to `entry` (not an object, or not what its input schema takes, each field
   * named), or null when they fit. `call` checks it before sending; the gateway asks it before a person is
   * asked to allow a call that could only fail.
   */
  argumentProblem(entry: ToolEntry, args: unknown): string | null {
    if (typeof args !== "object" || args === null || Array.isArray(args))
      return `The arguments of ${entry.binding} must be an object.`;
    const problem = this.checker.check(entry.inputSchema, args);
    return problem ? `The arguments of ${entry.binding} do not fit its schema: ${problem}` : null;
  }

  /**
   * Calls a binding. Arguments are checked against its input schema first; every failure is an
   * AppCallError (`invalid_arguments`, `unavailable`, `timeout`, `tool_error`, `input_required`).
   */
  async call(
    entry: ToolEntry,
    args: unknown,
    /** `userId`: the caller, whose own sign-in a `person`-mode OAuth App's calls use. */
    opts: {
      timeoutMs?: number;
      /** Registers how to cancel the call; the returned function takes it back (see AppConnection.call). */
      onCancel?: (cancel: () => void) => () => void;
      onProgress?: (progress: AppProgress) => void;
      userId?: string;
      /** The App may answer with a task (it then fails with `task_started` carrying it; see tasks.ts). */
      tasks?: boolean;
      /** See `AppConnection.call`: return a 2026-07-28 `input_required` instead of asking in memory. */
      inputRequired?: "ask" | "return";
      /** Send again after an `input_required` round, with the answers and the server's state. */
      retry?: RetryParams;
      /** W3C trace context for `_meta` of each MCP request (server/services/run-trace.ts). */
      traceMeta?: SendOptions["traceMeta"];
    } = {},
  ): Promise<AppCallResult> {
    let conn = this.conns.get(entry.connectionId);
    if (!conn || this.closed) throw new AppCallError("unavailable", `${entry.binding} is not available now.`);
    const problem = this.argumentProblem(entry, args);
    if (problem) throw new AppCallError("invalid_arguments", problem);
    const input = args as Record<string, unknown>;
    const op: Operation =
      entry.kind === "resource"
        ? { kind: "resource", uri: String(input.uri) }
        : entry.kind === "prompt"
          ? { kind: "prompt", name: String(input.name), args: input.arguments as Record<string, string> | undefined }
          : { kind: "tool", name: entry.name, args: input, ...(opts.tasks ? { tasks: true } : {}) };
    const timeoutMs = Math.min(Math.max(Math.floor(opts.timeoutMs ?? this.callTimeoutMs), 1), 3_600_000);
    const t = conn.record.transport;
    if (t.type === "http" && t.oauth?.mode === "person") {
      if (!this.personal || !opts.userId)
        throw new AppCallError(
          "auth_required",
          `${entry.binding} needs the caller's own sign-in to ${conn.record.name}.`,
        );
      conn = await this.personal.connectionFor(conn.record, opts.userId);
    }
    return conn.call(op, {
      timeoutMs,
      onCancel: opts.onCancel,
      binding: entry.binding,
      onProgress: opts.onProgress,
      inputRequired: opts.inputRequired,
      retry: opts.retry,
      traceMeta: opts.traceMeta,
    });
  }

  /**
   * One request about task `taskId` of connection `connectionId` (see tasks.ts): its state (`get`, with the
   * result once completed), answers to its questions (`update`), or `cancel`. `userId`: whose connection
   * a `person`-mode OAuth App's task lives on. Failures are AppCallErrors.
   */
  async task(
    connectionId: string,
    taskId: string,
    action: { type: "get" } | { type: "cancel" } | { type: "update"; inputResponses: Record<string, unknown> },
    opts: { userId?: string } = {},
  ): Promise<TaskState | undefined> {
    let conn = this.conns.get(connectionId);
    if (!conn || this.closed) throw new AppCallError("unavailable", "The App of this task is not available now.");
    const t = conn.record.transport;
    if (t.type === "http" && t.oauth?.mode === "person") {
      if (!this.personal || !opts.userId)
        throw new AppCallError("auth_required", `This task needs the caller's own sign-in to ${conn.record.name}.`);
      conn = await this.personal.connectionFor(conn.record, opts.userId);
    }
    return conn.task(action, taskId, this.callTimeoutMs);
  }

  /** An App's open question to a person, by id (see `onElicitation`). */
  pendingInput(id: string): PendingInput | undefined {
    return this.inputs.get(id);
  }

  connections(): ConnectionView[] {
    return [...this.conns.values()].map((c) => this.view(c));
  }

  connection(id: string): ConnectionView | undefined {
    const c = this.conns.get(id);
    return c && this.view(c);
  }

  /** Whether a connection is one of OpenBot's built-in Apps (our own code in this process), without building its view. */
  isBuiltin(id: string): boolean {
    const record = this.conns.get(id)?.record;
    return record !== undefined && record.builtin !== null;
  }

  /** Adds and connects a connection; throws ConnectionConfigError naming a bad field. */
  async add(input: { name: unknown; transport: unknown }): Promise<ConnectionView> {
    const name = parseName(input.name);
    const transport = parseTransport(input.transport);
    const now = Date.now();
    const record: ConnectionRecord = {
      id: `conn_${randomUUID()}`,
      name,
      transport,
      enabled: true,
      policies: {},
      builtin: transport.type === "builtin" ? transport.app : null,
      untrustedContent: null,
      createdAt: now,
    };
    const stored = storedTransport(record.id, transport, this.options.box);
    await this.options.db.query(
      "insert into connections (id, name, slug, transport, transport_enc, enabled, policies, builtin, created_at, updated_at) values ($1, $2, $3, $4, $5, true, '{}', $6, $7, $7)",
      [record.id, name, slugify(name, "app"), stored.transport, stored.transportEnc, record.builtin, now],
    );
    const conn = this.make(record);
    this.conns.set(record.id, conn);
    this.rebuild();
    await conn.start();
    return this.view(conn);
  }

  /** Renames, enables or disables a connection, or sets its untrusted-content flag (null: back to the default). */
  async update(
    id: string,
    patch: { name?: unknown; enabled?: unknown; untrustedContent?: unknown },
  ): Promise<ConnectionView> {
    const conn = this.require(id);
    const name = patch.name === undefined ? conn.record.name : parseName(patch.name);
    if (patch.enabled !== undefined && typeof patch.enabled !== "boolean")
      throw new ConnectionConfigError("enabled: must be true or false", "enabled");
    if (
      patch.untrustedContent !== undefined &&
      patch.untrustedContent !== null &&
      typeof patch.untrustedContent !== "boolean"
    )
      throw new ConnectionConfigError("untrustedContent: must be true, false or null", "untrustedContent");
    const enabled = patch.enabled ?? conn.record.enabled;
    const untrustedContent =
      patch.untrustedContent === undefined ? conn.record.untrustedContent : (patch.untrustedContent as boolean | null);
    await this.options.db.query(
      "update connections set name = $1, slug = $2, enabled = $3, untrusted_content = $4, updated_at = $5 where id = $6",
      [name, slugify(name, "app"), enabled, untrustedContent, Date.now(), id],
    );
    const wasEnabled = conn.record.enabled;
    conn.record = { ...conn.record, name, enabled, untrustedContent };
    if (wasEnabled && !enabled) await conn.stop();
    if (!wasEnabled && enabled) await conn.start();
    this.rebuild();
    return this.view(conn);
  }

  /** Removes a connection (its child process is stopped; its bindings disappear). */
  async remove(id: string): Promise<void> {
    const conn = this.require(id);
    await this.options.db.query("delete from connections where id = $1", [id]);
    this.conns.delete(id);
    await conn.stop();
    await this.personal?.drop(id);
    const target = oauthTarget(conn.record);
    if (target) await this.options.oauth?.removeAll(target);
    this.rebuild();
  }

  /** The OAuth settings of an http connection (undefined: not an OAuth App, or no such connection). */
  oauthTarget(id: string): OAuthTarget | undefined {
    const conn = this.conns.get(id);
    return conn && oauthTarget(conn.record);
  }

  /**
   * After a sign-in (or sign-out) of `userId` (SHARED: the connection's own): the shared connection
   * reconnects with it; a person's own connection is made anew at their next call.
   */
  async signedInChanged(id: string, userId: string): Promise<void> {
    const conn = this.require(id);
    if (userId !== SHARED) {
      await this.personal?.drop(id, userId);
      return;
    }
    if (!conn.record.enabled) return;
    await conn.stop();
    await conn.start();
    this.rebuild();
  }

  /** Merges per-tool policy overrides; `null` removes an override (back to the annotation default). */
  async setPolicies(id: string, patch: unknown): Promise<ConnectionView> {
    const conn = this.require(id);
    const parsed = policiesPatchSchema.safeParse(patch);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = ["policies", ...(issue?.path ?? []).map(String)].join(".");
      throw new ConnectionConfigError(`${field}: ${issue?.message ?? "is invalid"} (allow, ask or deny)`, field);
    }
    this.checkPolicyNames(conn, parsed.data);
    const policies: Record<string, Policy> = { ...conn.record.policies };
    for (const [tool, policy] of Object.entries(parsed.data)) {
      if (policy === null) delete policies[tool];
      else policies[tool] = policy;
    }
    await this.options.db.query("update connections set policies = $1, updated_at = $2 where id = $3", [
      JSON.stringify(policies),
      Date.now(),
      id,
    ]);
    conn.record = { ...conn.record, policies };
    this.rebuild();
    return this.view(conn);
  }

  /**
   * A policy set for a name the connected App does not list is a typo that would change nothing (e.g. the
   * binding's `list_events` for the tool `list-events`): refused, naming the tool meant when the binding's
   * spelling matches one. Clearing a name (null) is always allowed, and so is any name while the App's
   * list is unknown (not connected yet, failed, disabled): there is nothing to check it against.
   */
  private checkPolicyNames(conn: AppConnection, patch: Record<string, Policy | null>): void {
    if (conn.status !== "connected") return;
    const own = this.entries.filter((e) => e.connectionId === conn.record.id);
    if (own.length === 0) return;
    for (const [name, policy] of Object.entries(patch)) {
      if (policy === null || own.some((e) => e.name === name)) continue;
      const meant = own.find((e) => e.binding.slice(e.binding.lastIndexOf(".") + 1) === name);
      const hint = meant ? ` (the binding ${meant.binding} is the tool "${meant.name}")` : "";
      throw new ConnectionConfigError(
        `policies.${name}: ${conn.record.name} has no tool named "${name}"${hint}; its tools: ${own
          .map((e) => e.name)
          .join(", ")}`,
        `policies.${name}`,
      );
    }
  }

  /**
   * Brings one connection in line with its row (another instance added, edited or removed it): a new
   * row is connected, a gone row stopped, a changed transport reconnected; names, switches and policies
   * apply at once. A connection already in line (this instance made the edit) is left as it is.
   */
  async reload(id: string): Promise<void> {
    if (this.closed) return;
    const row = (await this.options.db.query<ConnectionRow>("select * from connections where id = $1", [id]))[0];
    const conn = this.conns.get(id);
    if (!row) {
      if (!conn) return;
      this.conns.delete(id);
      await conn.stop();
      this.rebuild();
      return;
    }
    const record = toRecord(row, this.options.box);
    if (!conn) {
      const made = this.make(record);
      this.conns.set(id, made);
      this.rebuild();
      await made.start();
      this.rebuild();
      return;
    }
    const before = conn.record;
    if (JSON.stringify(before.transport) !== JSON.stringify(record.transport)) {
      this.conns.set(id, this.make(record));
      await conn.stop();
      this.rebuild();
      if (record.enabled) await this.conns.get(id)?.start();
      this.rebuild();
      return;
    }
    conn.record = { ...before, name: record.name, enabled: record.enabled, policies: record.policies };
    if (before.enabled && !record.enabled) await conn.stop();
    if (!before.enabled && record.enabled) await conn.start();
    this.rebuild();
  }

  /** The stdio child's process id of a connection, if it has one (diagnostics and tests). */
  processId(id: string): number | null {
    return this.conns.get(id)?.pid() ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const input of this.inputs.values()) input.dispose();
    this.inputs.clear();
    await Promise.allSettled([...this.conns.values()].map((c) => c.stop()));
    await this.personal?.close();
    await this.builtin.close();
  }

  private make(record: ConnectionRecord): AppConnection {
    const target = oauthTarget(record);
    return new AppConnection(record, {
      ...this.deps(),
      ...(target && this.options.oauth ? { authorize: this.options.oauth.authorize(target, SHARED) } : {}),
    });
  }

  private deps(): ConnectionDeps {
    return {
      dataDir: this.options.dataDir,
      builtin: this.builtin,
      connectTimeoutMs: this.options.connectTimeoutMs ?? 15_000,
      inputTimeoutMs: this.options.inputTimeoutMs ?? 600_000,
      retryMinMs: this.options.reconnect?.minMs ?? 500,
      retryMaxMs: this.options.reconnect?.maxMs ?? 30_000,
      onChange: () => this.rebuild(),
      onInput: (input) => {
        this.inputs.set(input.id, input);
        input.result.then(
          () => this.inputs.delete(input.id),
          () => this.inputs.delete(input.id),
        );
        this.options.onElicitation?.(input);
      },
    };
  }

  private require(id: string): AppConnection {
    const conn = this.conns.get(id);
    if (!conn) throw new ConnectionConfigError(`No connection has the id ${id}.`, "id", "NOT_FOUND");
    return conn;
  }

  /** Recomputes slugs, bindings and warnings from the connections' current lists. */
  private rebuild(): void {
    const catalog = buildCatalog([...this.conns.values()]);
    this.entries = catalog.entries;
    this.byBinding = new Map(catalog.entries.map((e) => [e.binding, e]));
    this.slugs = catalog.slugs;
    this.warnings = catalog.warnings;
  }

  private view(conn: AppConnection): ConnectionView {
    const { record } = conn;
    const slug = this.slugs.get(record.id) ?? slugify(record.name, "app");
    const error = conn.error && hideTransportSecrets(conn.error, record.transport);
    return {
      id: record.id,
      name: record.name,
      slug,
      transport: redactTransport(record.transport),
      enabled: record.enabled,
      builtin: record.builtin !== null,
      untrustedContent: untrustedConnection(record),
      untrustedContentSet: record.untrustedContent,
      status: conn.status,
      ...(conn.protocolVersion() ? { protocolVersion: conn.protocolVersion() } : {}),
      ...(conn.listTtlMs !== undefined ? { listTtlMs: conn.listTtlMs } : {}),
      ...(error && conn.status === "failed" ? { error } : {}),
      tools: this.entries
        .filter((e) => e.connectionId === record.id)
        .map((e) => ({
          name: e.name,
          binding: e.binding,
          description: e.description,
          policy: e.policy,
          defaultPolicy: e.defaultPolicy,
          overridden: Object.hasOwn(record.policies, e.name),
          kind: e.kind,
          readOnlyHint: e.annotations?.readOnlyHint === true,
          untrustedContent: e.untrustedContent === true,
        })),
      resources: conn.resources.map((r) => ({
        uri: r.uri,
        name: r.name,
        ...(r.description ? { description: r.description } : {}),
        ...(r.mimeType ? { mimeType: r.mimeType } : {}),
      })),
      prompts: conn.prompts.map((p) => ({
        name: p.name,
        ...(p.description ? { description: p.description } : {}),
        ...(p.arguments
          ? { arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required })) }
          : {}),
      })),
      warnings: this.warnings.get(record.id) ?? [],
      ...(record.transport.type === "http" && record.transport.oauth
        ? { oauth: { mode: record.transport.oauth.mode, needsSignIn: conn.authRequired } }
        : {}),
      createdAt: record.createdAt,
    };
  }
}

/**
 * Seals the transports of rows written before migration 0028 (their secrets were plain JSON), in place:
 * `rows` then read as the database does. Each row is sealed only if it still is not (another instance
 * starting at the same moment may have done it).
 */
async function sealOlderRows(options: AppRegistryOptions, rows: ConnectionRow[]): Promise<void> {
  const { box, db } = options;
  if (!box) return;
  for (const row of rows) {
    if (row.transport_enc || row.builtin !== null) continue;
    let transport: TransportConfig;
    try {
      transport = parseTransport(JSON.parse(row.transport));
    } catch {
      continue; // unreadable: it fails to start and says so, sealed or not
    }
    const stored = storedTransport(row.id, transport, box);
    const sealed = await db.query<ConnectionRow>(
      "update connections set transport = $1, transport_enc = $2 where id = $3 and transport_enc is null returning *",
      [stored.transport, stored.transportEnc, row.id],
    );
    const now = sealed[0] ?? (await db.query<ConnectionRow>("select * from connections where id = $1", [row.id]))[0];
    if (now) Object.assign(row, now);
  }
}
