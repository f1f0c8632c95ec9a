/**
 * The App registry: one per process. It serves the built-in apps, keeps one live MCP connection per row
 * of `connections`, turns their tools, resources and prompts into bindings (`work_calendar.list_events`)
 * with a policy each, validates arguments against the tool's input schema before anything is sent, and
 * calls the App with a deadline. Admin changes (add, rename, enable, remove, policies) are persisted and
 * take effect at once.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { z } from "zod";
import { policiesPatchSchema, policySchema } from "@/contracts/connections";
import type { Db } from "../db/client";
import { type BuiltinHost, startBuiltinHost } from "./builtin/host";
import { AppConnection, type ConnectionRecord, type ConnectionStatus, type Operation, type Policy } from "./connection";
import type { InputRequest, PendingInput } from "./elicitation";
import { AppCallError, type AppCallResult, ConnectionConfigError } from "./errors";
import { assignSlugs, slugify } from "./slug";
import { parseTransport, redactTransport, type TransportConfig } from "./transports";

export type { ConnectionStatus, Policy } from "./connection";
export type { InputAnswer, PendingInput } from "./elicitation";
export type { AppCallFailure, AppCallResult } from "./errors";
export { AppCallError, ConnectionConfigError, isAppCallError, isConnectionConfigError } from "./errors";
export type { TransportConfig } from "./transports";

export interface ToolEntry {
  connectionId: string;
  connectionName: string;
  connectionSlug: string;
  /** MCP tool name; `resources/read` and `prompts/get` for the read bindings. */
  name: string;
  /** `<connection slug>.<capability slug>`, e.g. `work_calendar.list_events`. */
  binding: string;
  kind: "tool" | "resource" | "prompt";
  title?: string;
  /** Untrusted text from the App. */
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  policy: Policy;
  /** The policy without an admin's override (from the tool's annotations). */
  defaultPolicy: Policy;
}

export interface ConnectionView {
  id: string;
  name: string;
  slug: string;
  /** Header and environment values hidden. */
  transport: TransportConfig;
  enabled: boolean;
  builtin: boolean;
  status: ConnectionStatus;
  error?: string;
  tools: {
    name: string;
    binding: string;
    description: string;
    policy: Policy;
    defaultPolicy: Policy;
    overridden: boolean;
    kind: ToolEntry["kind"];
    readOnlyHint: boolean;
  }[];
  resources: { uri: string; name: string; description?: string; mimeType?: string }[];
  prompts: {
    name: string;
    description?: string;
    arguments?: { name: string; description?: string; required?: boolean }[];
  }[];
  /** Slug clashes and similar things an admin should see. */
  warnings: string[];
  createdAt: number;
}

export interface AppRegistryOptions {
  db: Db;
  dataDir: string;
  /** Deadline of one call. Default 30000. */
  callTimeoutMs?: number;
  /** Deadline of connecting and listing. Default 15000. */
  connectTimeoutMs?: number;
  /** How long an App's question to a person stays open. Default 600000 (10 min). */
  inputTimeoutMs?: number;
  /** Reconnect backoff after a failure: first delay, doubling up to `maxMs`. Default 500 ms to 30000 ms. */
  reconnect?: { minMs?: number; maxMs?: number };
  /** Called when an App asks for input during a call (the call fails with `input_required`). */
  onElicitation?: (input: PendingInput) => void;
}

const PolicySchema = policySchema;
const NameSchema = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");
const RESERVED_CONNECTION_SLUGS = new Set(["call", "constructor", "prototype"]);
const RESERVED_TOOL_SLUGS = ["constructor", "prototype"];

interface ConnectionRow {
  id: string;
  name: string;
  transport: string;
  enabled: boolean;
  policies: string;
  builtin: string | null;
  created_at: string | number;
}

export class AppRegistry {
  private readonly conns = new Map<string, AppConnection>();
  private entries: ToolEntry[] = [];
  private byBinding = new Map<string, ToolEntry>();
  private slugs = new Map<string, string>();
  private warnings = new Map<string, string[]>();
  private readonly inputs = new Map<string, InputRequest>();
  private readonly validators = new WeakMap<object, ValidateFunction | null>();
  private readonly ajv = newAjv();
  private readonly callTimeoutMs: number;
  private closed = false;

  private constructor(
    private readonly options: AppRegistryOptions,
    private readonly builtin: BuiltinHost,
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? 30_000;
  }

  /** Starts the built-in apps' server and connects every enabled connection (waits for first attempts). */
  static async start(options: AppRegistryOptions): Promise<AppRegistry> {
    const builtin = await startBuiltinHost(options.db);
    const registry = new AppRegistry(options, builtin);
    try {
      const rows = await options.db.query<ConnectionRow>("select * from connections order by created_at, id");
      for (const row of rows) registry.conns.set(row.id, registry.make(toRecord(row)));
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

  resolve(binding: string): ToolEntry | undefined {
    return this.byBinding.get(binding);
  }

  /**
   * Calls a binding. Arguments are checked against its input schema first; every failure is an
   * AppCallError (`invalid_arguments`, `unavailable`, `timeout`, `tool_error`, `input_required`).
   */
  async call(
    entry: ToolEntry,
    args: unknown,
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<AppCallResult> {
    const conn = this.conns.get(entry.connectionId);
    if (!conn || this.closed) throw new AppCallError("unavailable", `${entry.binding} is not available now.`);
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new AppCallError("invalid_arguments", `The arguments of ${entry.binding} must be an object.`);
    }
    const problem = this.check(entry.inputSchema, args);
    if (problem)
      throw new AppCallError(
        "invalid_arguments",
        `The arguments of ${entry.binding} do not fit its schema: ${problem}`,
      );
    const input = args as Record<string, unknown>;
    const op: Operation =
      entry.kind === "resource"
        ? { kind: "resource", uri: String(input.uri) }
        : entry.kind === "prompt"
          ? { kind: "prompt", name: String(input.name), args: input.arguments as Record<string, string> | undefined }
          : { kind: "tool", name: entry.name, args: input };
    const timeoutMs = Math.min(Math.max(Math.floor(opts.timeoutMs ?? this.callTimeoutMs), 1), 3_600_000);
    return conn.call(op, { timeoutMs, signal: opts.signal, binding: entry.binding });
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
      createdAt: now,
    };
    await this.options.db.query(
      "insert into connections (id, name, slug, transport, enabled, policies, builtin, created_at, updated_at) values ($1, $2, $3, $4, true, '{}', $5, $6, $6)",
      [record.id, name, slugify(name, "app"), JSON.stringify(transport), record.builtin, now],
    );
    const conn = this.make(record);
    this.conns.set(record.id, conn);
    this.rebuild();
    await conn.start();
    return this.view(conn);
  }

  /** Renames and/or enables or disables a connection. */
  async update(id: string, patch: { name?: unknown; enabled?: unknown }): Promise<ConnectionView> {
    const conn = this.require(id);
    const name = patch.name === undefined ? conn.record.name : parseName(patch.name);
    if (patch.enabled !== undefined && typeof patch.enabled !== "boolean")
      throw new ConnectionConfigError("enabled: must be true or false", "enabled");
    const enabled = patch.enabled ?? conn.record.enabled;
    await this.options.db.query(
      "update connections set name = $1, slug = $2, enabled = $3, updated_at = $4 where id = $5",
      [name, slugify(name, "app"), enabled, Date.now(), id],
    );
    const wasEnabled = conn.record.enabled;
    conn.record = { ...conn.record, name, enabled };
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
    const record = toRecord(row);
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
    await this.builtin.close();
  }

  private make(record: ConnectionRecord): AppConnection {
    return new AppConnection(record, {
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
    });
  }

  private require(id: string): AppConnection {
    const conn = this.conns.get(id);
    if (!conn) throw new ConnectionConfigError(`No connection has the id ${id}.`, "id", "NOT_FOUND");
    return conn;
  }

  /** Recomputes slugs, bindings and warnings from the connections' current lists. */
  private rebuild(): void {
    const conns = [...this.conns.values()];
    const connSlugs = assignSlugs(
      conns.map((c) => slugify(c.record.name, "app")),
      RESERVED_CONNECTION_SLUGS,
    );
    const entries: ToolEntry[] = [];
    const slugs = new Map<string, string>();
    const warnings = new Map<string, string[]>();
    conns.forEach((conn, i) => {
      const assigned = connSlugs[i] ?? { slug: conn.record.id };
      const slug = assigned.slug;
      const notes: string[] = [];
      if (assigned.wanted) {
        const owner = conns.find((_, j) => connSlugs[j]?.slug === assigned.wanted);
        notes.push(
          owner
            ? `The slug "${assigned.wanted}" is taken by the older connection "${owner.record.name}"; this connection's bindings use "${slug}".`
            : `The slug "${assigned.wanted}" is reserved; this connection's bindings use "${slug}".`,
        );
      }
      slugs.set(conn.record.id, slug);
      if (conn.status !== "disabled") entries.push(...this.entriesOf(conn, slug, notes));
      warnings.set(conn.record.id, notes);
    });
    this.entries = entries;
    this.byBinding = new Map(entries.map((e) => [e.binding, e]));
    this.slugs = slugs;
    this.warnings = warnings;
  }

  private entriesOf(conn: AppConnection, connSlug: string, notes: string[]): ToolEntry[] {
    const { record } = conn;
    const base = { connectionId: record.id, connectionName: record.name, connectionSlug: connSlug };
    const entries: ToolEntry[] = [];
    const reserved = new Set(RESERVED_TOOL_SLUGS);
    if (conn.hasResources) {
      reserved.add("read_resource");
      entries.push({
        ...base,
        ...resourceBinding(conn),
        binding: `${connSlug}.read_resource`,
        policy: record.policies["resources/read"] ?? "allow",
        defaultPolicy: "allow",
      });
    }
    if (conn.prompts.length) {
      reserved.add("get_prompt");
      entries.push({
        ...base,
        ...promptBinding(conn),
        binding: `${connSlug}.get_prompt`,
        policy: record.policies["prompts/get"] ?? "allow",
        defaultPolicy: "allow",
      });
    }
    const tools = [...conn.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const toolSlugs = assignSlugs(
      tools.map((t) => slugify(t.name, "tool")),
      reserved,
    );
    tools.forEach((tool, i) => {
      const assigned = toolSlugs[i] ?? { slug: `tool_${i}` };
      if (assigned.wanted) {
        notes.push(
          `The tool "${tool.name}" gives the binding name "${assigned.wanted}", which is already used; it is bound as "${assigned.slug}".`,
        );
      }
      entries.push({
        ...base,
        name: tool.name,
        binding: `${connSlug}.${assigned.slug}`,
        kind: "tool",
        ...(tool.title ? { title: tool.title } : {}),
        description: tool.description ?? "",
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
        ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
        policy: record.policies[tool.name] ?? defaultPolicy(tool.name, tool.annotations),
        defaultPolicy: defaultPolicy(tool.name, tool.annotations),
      });
    });
    return entries.sort((a, b) => (a.binding < b.binding ? -1 : a.binding > b.binding ? 1 : 0));
  }

  /**
   * What is wrong with `args` under `schema`, naming each field (`args.title is required`), or undefined.
   * A schema Ajv cannot compile (remote `$ref`, unknown dialect) is left to the App.
   */
  private check(schema: Record<string, unknown>, args: object): string | undefined {
    let validate = this.validators.get(schema);
    if (validate === undefined) {
      try {
        const { $schema: _ignored, $id: _id, ...rest } = schema;
        validate = this.ajv.compile(rest);
      } catch {
        validate = null;
      }
      this.validators.set(schema, validate);
    }
    if (!validate || validate(args)) return undefined;
    return describeProblems(validate.errors ?? []);
  }

  private view(conn: AppConnection): ConnectionView {
    const { record } = conn;
    const slug = this.slugs.get(record.id) ?? slugify(record.name, "app");
    const error = conn.error;
    return {
      id: record.id,
      name: record.name,
      slug,
      transport: redactTransport(record.transport),
      enabled: record.enabled,
      builtin: record.builtin !== null,
      status: conn.status,
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
      createdAt: record.createdAt,
    };
  }
}

/** The JSON Schema validator for tool arguments: all errors, formats checked, unknown keywords allowed. */
function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true, validateSchema: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  return addFormats(ajv);
}

const MAX_PROBLEMS = 5;

/** Ajv's errors as `args.<field> <problem>` (never the values), at most five. */
function describeProblems(errors: ErrorObject[]): string {
  const seen = new Set<string>();
  for (const e of errors) {
    const at = [
      "args",
      ...e.instancePath
        .split("/")
        .slice(1)
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~")),
    ];
    let text: string;
    if (e.keyword === "required") text = `${[...at, String(e.params.missingProperty)].join(".")} is required`;
    else if (e.keyword === "additionalProperties")
      text = `${[...at, String(e.params.additionalProperty)].join(".")} is not allowed`;
    else text = `${at.join(".")} ${e.message ?? "is invalid"}`;
    seen.add(text.slice(0, 200));
    if (seen.size === MAX_PROBLEMS) break;
  }
  return [...seen].join("; ") || "they are invalid";
}

function parseName(input: unknown): string {
  const parsed = NameSchema.safeParse(input);
  if (!parsed.success)
    throw new ConnectionConfigError(`name: ${parsed.error.issues[0]?.message ?? "is invalid"}`, "name");
  return parsed.data;
}

function toRecord(row: ConnectionRow): ConnectionRecord {
  let transport: TransportConfig;
  let policies: Record<string, Policy> = {};
  try {
    transport = parseTransport(JSON.parse(row.transport));
  } catch {
    transport = { type: "stdio", command: "/nonexistent/invalid-transport" };
  }
  try {
    const parsed = z.record(z.string(), PolicySchema).safeParse(JSON.parse(row.policies));
    if (parsed.success) policies = parsed.data;
  } catch {
    policies = {};
  }
  return {
    id: row.id,
    name: row.name,
    transport,
    enabled: row.enabled,
    policies,
    builtin: row.builtin,
    createdAt: Number(row.created_at),
  };
}

function resourceBinding(
  conn: AppConnection,
): Pick<ToolEntry, "name" | "kind" | "description" | "inputSchema" | "outputSchema"> {
  const known = conn.resources.slice(0, 10).map((r) => `${r.uri} (${r.name})`);
  const more = conn.resources.length > known.length ? `, and ${conn.resources.length - known.length} more` : "";
  return {
    name: "resources/read",
    kind: "resource",
    description: `Reads one resource of ${conn.record.name} by its URI.${known.length ? ` Known resources: ${known.join(", ")}${more}.` : ""}`,
    inputSchema: {
      type: "object",
      properties: { uri: { type: "string", minLength: 1, description: "The resource's URI" } },
      required: ["uri"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        contents: {
          type: "array",
          items: {
            type: "object",
            properties: {
              uri: { type: "string" },
              mimeType: { type: "string" },
              text: { type: "string" },
              blob: { type: "string", description: "base64" },
            },
            required: ["uri"],
          },
        },
      },
      required: ["contents"],
    },
  };
}

function promptBinding(
  conn: AppConnection,
): Pick<ToolEntry, "name" | "kind" | "description" | "inputSchema" | "outputSchema"> {
  const names = conn.prompts.map((p) => p.name);
  return {
    name: "prompts/get",
    kind: "prompt",
    description: `Gets one prompt of ${conn.record.name} by name: ${names.slice(0, 20).join(", ")}${names.length > 20 ? ", …" : ""}.`,
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", enum: names, description: "The prompt's name" },
        arguments: { type: "object", additionalProperties: { type: "string" }, description: "The prompt's arguments" },
      },
      required: ["name"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        description: { type: "string" },
        messages: {
          type: "array",
          items: {
            type: "object",
            properties: { role: { type: "string", enum: ["user", "assistant"] }, content: { type: "object" } },
            required: ["role", "content"],
          },
        },
      },
      required: ["messages"],
    },
  };
}

/** Tool names that suggest reading secrets or the environment (get_env, read_secret, list_tokens, …). */
const SECRET_LIKE =
  /(^|[^a-z])(env|environment|secrets?|credentials?|tokens?|passwords?|api[_-]?keys?|private[_-]?keys?)([^a-z]|$)/i;

/**
 * A tool's policy until an admin sets one: allow only a tool that says it is read-only and does not say it
 * reaches the open world, and whose name does not suggest it reads secrets; everything else asks.
 */
export function defaultPolicy(
  name: string,
  annotations: { readOnlyHint?: unknown; openWorldHint?: unknown } | undefined,
): Policy {
  if (annotations?.readOnlyHint !== true || annotations.openWorldHint === true) return "ask";
  return SECRET_LIKE.test(name.replace(/([a-z0-9])([A-Z])/g, "$1_$2")) ? "ask" : "allow";
}
