/**
 * Connection transports: the zod schema of what an admin may configure (stdio command, Streamable HTTP
 * URL, a preset of the npm reference servers, or a built-in app) and the SDK client transport for each.
 * Presets run from node_modules with this Node binary, their files under `<dataDir>/apps/<connectionId>/`.
 * Each opened transport also says, where the wire tells it, which of our calls an App's own request
 * (an elicitation) belongs to: see `askedBy`.
 */
import "server-only";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type FetchLike,
  type JSONRPCMessage,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { z } from "zod";
import { BUILTIN_APPS, type BuiltinHost } from "./builtin/host";
import { ConnectionConfigError } from "./errors";
import { TaskCapture, type TaskState } from "./tasks";

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name");
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name");

const StdioTransport = z.strictObject({
  type: z.literal("stdio"),
  command: z.string().min(1).max(4096),
  args: z.array(z.string().max(4096)).max(256).optional(),
  env: z.record(envName, z.string().max(65536)).optional(),
});
/**
 * OAuth for an http connection: `shared` (an admin signs in once, every call uses that sign-in) or
 * `person` (each person signs in; their calls use their own token). A client registered by hand goes in
 * `clientId` / `clientSecret`; without one OpenBot uses its Client ID Metadata Document or registers.
 */
export const OAuthConfigSchema = z.strictObject({
  mode: z.enum(["shared", "person"], { error: 'must be "shared" or "person"' }),
  clientId: z.string().min(1).max(2048).optional(),
  clientSecret: z.string().min(1).max(4096).optional(),
  scope: z.string().max(1000).optional(),
});
export type OAuthConfig = z.infer<typeof OAuthConfigSchema>;
const HttpTransport = z.strictObject({
  type: z.literal("http"),
  url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  headers: z.record(headerName, z.string().max(8192)).optional(),
  oauth: OAuthConfigSchema.optional(),
});
export const PRESETS = ["everything", "memory", "filesystem"] as const;
const PresetTransport = z.strictObject({ type: z.literal("preset"), preset: z.enum(PRESETS) });
const BuiltinTransport = z.strictObject({ type: z.literal("builtin"), app: z.enum(BUILTIN_APPS) });

export const TransportSchema = z.discriminatedUnion(
  "type",
  [StdioTransport, HttpTransport, PresetTransport, BuiltinTransport],
  {
    error: 'must be an object with "type": "stdio", "http", "preset" or "builtin"',
  },
);
export type TransportConfig = z.infer<typeof TransportSchema>;

/** Parses a transport, throwing a ConnectionConfigError that names the wrong field (`transport.url`). */
export function parseTransport(input: unknown): TransportConfig {
  const parsed = TransportSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = ["transport", ...(issue?.path ?? []).map(String)].join(".");
  throw new ConnectionConfigError(`${field}: ${issue?.message ?? "is invalid"}`, field);
}

/** The transport as shown to admins: header and environment values are hidden. */
export function redactTransport(t: TransportConfig): TransportConfig {
  const hide = (r: Record<string, string> | undefined) =>
    r && Object.fromEntries(Object.keys(r).map((k) => [k, "••••"]));
  if (t.type === "stdio") return { ...t, ...(t.env ? { env: hide(t.env) } : {}) };
  if (t.type === "http")
    return {
      ...t,
      ...(t.headers ? { headers: hide(t.headers) } : {}),
      ...(t.oauth?.clientSecret ? { oauth: { ...t.oauth, clientSecret: "••••" } } : {}),
    };
  return t;
}

/** Values shorter than this are not hidden in text (a flag like `1` or `on` would garble every message). */
const MIN_HIDDEN = 4;

/**
 * `text` (a connection's error, which may quote the child's stderr, a URL or a command line) with every
 * value of the transport that says how it is reached hidden: environment and header values, the OAuth
 * client secret, and the URL's userinfo, query (each value too) and fragment. Admins see those values as
 * `••••` in the transport, so the error must not show them either.
 */
export function hideTransportSecrets(text: string, t: TransportConfig): string {
  const values: string[] = [];
  if (t.type === "stdio") values.push(...Object.values(t.env ?? {}));
  if (t.type === "http") {
    values.push(...Object.values(t.headers ?? {}));
    if (t.oauth?.clientSecret) values.push(t.oauth.clientSecret);
    const url = new URL(t.url);
    const decoded = (v: string) => {
      try {
        return decodeURIComponent(v);
      } catch {
        return v;
      }
    };
    values.push(url.username, url.password, decoded(url.username), decoded(url.password));
    values.push(url.search.slice(1), url.hash.slice(1), ...url.searchParams.values());
    for (const part of url.search.slice(1).split("&")) values.push(part.slice(part.indexOf("=") + 1));
  }
  const hidden = [...new Set(values.filter((v) => v.length >= MIN_HIDDEN))].sort((a, b) => b.length - a.length);
  return hidden.reduce((acc, value) => acc.split(value).join("••••"), text);
}

/**
 * The transport as shown to a member (apps.use without platform.admin): what kind of App it is and where,
 * never how it is reached. A URL keeps its origin and path (a query, userinfo or fragment may carry a
 * token); a command keeps its file name (its arguments and directory may carry one); OAuth keeps its mode,
 * which says whether the person signs in themselves.
 */
export function memberTransport(t: TransportConfig): TransportConfig {
  if (t.type === "stdio") return { type: "stdio", command: path.basename(t.command) };
  if (t.type === "http") {
    const url = new URL(t.url);
    return {
      type: "http",
      url: `${url.origin}${url.pathname}`,
      ...(t.oauth ? { oauth: { mode: t.oauth.mode } } : {}),
    };
  }
  return t;
}

export interface OpenedTransport {
  transport: Transport;
  /** The child's process id (stdio only). */
  pid(): number | null;
  /** The last lines the child wrote to stderr (stdio only). */
  stderrTail(): string;
  /**
   * The call key (see `CALL_META`) of our request that the App's request `serverRequestId` was sent for,
   * when the transport can tell: Streamable HTTP sends it on that request's own response stream. Stdio
   * carries no such link (undefined).
   */
  askedBy(serverRequestId: string | number): string | undefined;
  /** The task an App answered our call `key` with (a call marked TASKS_META, see tasks.ts), once. */
  takeTask(key: string): TaskState | undefined;
}

/**
 * `params._meta` key with which a connection marks its request with a call key. The transport takes it
 * out before the request is sent, so the App never sees it.
 */
export const CALL_META = "dev.openbot/call";
const MAX_TRACKED = 10_000;
const MAX_SSE_LINE = 64 * 1024;

export interface TransportContext {
  connectionId: string;
  dataDir: string;
  builtin: BuiltinHost;
  /** For an OAuth-protected http connection: wraps fetch so requests carry (and renew) its token. */
  authorize?: (base: FetchLike) => FetchLike;
}

export function openTransport(config: TransportConfig, ctx: TransportContext): OpenedTransport {
  switch (config.type) {
    case "stdio":
      return stdio(config.command, config.args ?? [], config.env ?? {});
    case "preset":
      return preset(config.preset, ctx);
    case "http":
      return http(new URL(config.url), {
        ...(ctx.authorize ? { fetch: ctx.authorize(fetch) } : {}),
        requestInit: { headers: config.headers ?? {} },
        reconnectionOptions: {
          maxRetries: 2,
          initialReconnectionDelay: 500,
          maxReconnectionDelay: 2000,
          reconnectionDelayGrowFactor: 2,
        },
      });
    case "builtin": {
      const transport = ctx.builtin.connect(config.app);
      const marks = new CallMarks();
      marks.wrap(transport);
      return { transport, pid: () => null, stderrTail: () => "", askedBy: () => undefined, takeTask: marks.takeTask };
    }
  }
}

/**
 * Our requests' JSON-RPC ids by call key: the marker is read and removed as each request is sent. Task
 * answers to the requests that may have one are taken out of the stream here too (tasks.ts).
 */
class CallMarks {
  private readonly keyById = new Map<string, string>();
  private readonly idByKey = new Map<string, string>();
  private readonly tasks = new TaskCapture();

  wrap(transport: Transport): void {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(this.take(this.tasks.outbound(message)), options);
    // The SDK sets onmessage when it connects: every message it is handed passes the task capture first.
    let handler: Transport["onmessage"];
    Object.defineProperty(transport, "onmessage", {
      configurable: true,
      get: () => handler,
      set: (next: Transport["onmessage"]) => {
        handler = next && ((message, extra) => next(this.tasks.inbound(message), extra));
      },
    });
  }

  readonly takeTask = (key: string): TaskState | undefined => {
    const id = this.idByKey.get(key);
    return id === undefined ? undefined : this.tasks.take(id);
  };

  key(requestId: string | undefined): string | undefined {
    return requestId === undefined ? undefined : this.keyById.get(requestId);
  }

  private take(message: JSONRPCMessage): JSONRPCMessage {
    if (!("method" in message) || !("id" in message)) return message;
    const meta = message.params?._meta as Record<string, unknown> | undefined;
    const key = meta?.[CALL_META];
    if (typeof key !== "string") return message;
    remember(this.keyById, String(message.id), key);
    remember(this.idByKey, key, String(message.id));
    const { [CALL_META]: _marker, ...rest } = meta!;
    const { _meta: _old, ...params } = message.params!;
    return { ...message, params: Object.keys(rest).length ? { ...params, _meta: rest } : params };
  }
}

/** A Map that forgets its oldest entries beyond MAX_TRACKED. */
function remember(map: Map<string, string>, key: string, value: string): void {
  map.set(key, value);
  if (map.size > MAX_TRACKED) map.delete(map.keys().next().value!);
}

function http(url: URL, options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1]): OpenedTransport {
  const marks = new CallMarks();
  /** The App's request id → the id of our request on whose response stream it came. */
  const streamOf = new Map<string, string>();
  const base: FetchLike = options?.fetch ?? fetch;
  const tracking: FetchLike = async (input, init) => {
    const response = await base(input, init);
    const ours = init?.method === "POST" ? requestIdOf(init.body) : undefined;
    if (ours === undefined || !response.body || !response.headers.get("content-type")?.includes("text/event-stream"))
      return response;
    const body = watchRequests(response.body, (appRequestId) => remember(streamOf, appRequestId, ours));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  const transport = new StreamableHTTPClientTransport(url, { ...options, fetch: tracking });
  marks.wrap(transport);
  return {
    transport,
    pid: () => null,
    stderrTail: () => "",
    askedBy: (id) => marks.key(streamOf.get(String(id))),
    takeTask: marks.takeTask,
  };
}

/** The id of the one JSON-RPC request a POST body carries (none for batches and notifications). */
function requestIdOf(body: unknown): string | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return message &&
      typeof message.method === "string" &&
      (typeof message.id === "string" || typeof message.id === "number")
      ? String(message.id)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Passes an SSE body through unchanged, reporting the id of each JSON-RPC request in it (an App asking
 * us something) before the SDK reads that event. Lines are scanned one by one; long lines (results) are
 * skipped, not buffered.
 */
function watchRequests(body: ReadableStream<Uint8Array>, onRequest: (id: string) => void): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let line = "";
  let skipping = false;
  const scan = (text: string) => {
    let start = 0;
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", start)) {
      if (!skipping) inspect(line + text.slice(start, at));
      line = "";
      skipping = false;
      start = at + 1;
    }
    if (skipping) return;
    line += text.slice(start);
    if (line.length > MAX_SSE_LINE) {
      line = "";
      skipping = true;
    }
  };
  const inspect = (raw: string) => {
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (!text.startsWith("data:") || !text.includes('"method"')) return;
    try {
      const message = JSON.parse(text.slice(5)) as { id?: unknown; method?: unknown };
      if (typeof message.method === "string" && (typeof message.id === "string" || typeof message.id === "number"))
        onRequest(String(message.id));
    } catch {
      // not a JSON-RPC message: the SDK reports it
    }
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        scan(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
    }),
  );
}

function preset(name: (typeof PRESETS)[number], ctx: TransportContext): OpenedTransport {
  const dir = path.join(ctx.dataDir, "apps", ctx.connectionId);
  switch (name) {
    case "everything":
      return stdio(process.execPath, [packageBin("@modelcontextprotocol/server-everything"), "stdio"], {});
    case "memory":
      mkdirSync(dir, { recursive: true });
      return stdio(process.execPath, [packageBin("@modelcontextprotocol/server-memory")], {
        MEMORY_FILE_PATH: path.join(dir, "memory.jsonl"),
      });
    case "filesystem": {
      const files = path.join(dir, "files");
      mkdirSync(files, { recursive: true });
      return stdio(process.execPath, [packageBin("@modelcontextprotocol/server-filesystem"), files], {});
    }
  }
}

function stdio(command: string, args: string[], env: Record<string, string>): OpenedTransport {
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
  let tail = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-2000);
  });
  const marks = new CallMarks();
  marks.wrap(transport);
  return {
    transport,
    pid: () => transport.pid,
    stderrTail: () => tail.trim(),
    askedBy: () => undefined,
    takeTask: marks.takeTask,
  };
}

/** The entry file of an installed package's first `bin`, found by walking up from the working directory. */
function packageBin(pkg: string): string {
  const starts = [process.cwd()];
  try {
    starts.push(path.dirname(fileURLToPath(import.meta.url)));
  } catch {
    // not a file URL (bundled): the working directory is enough
  }
  for (const start of starts) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      const manifest = path.join(dir, "node_modules", pkg, "package.json");
      if (existsSync(manifest)) {
        const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin?: string | Record<string, string> };
        const entry = typeof bin === "string" ? bin : Object.values(bin ?? {})[0];
        if (entry) return path.join(dir, "node_modules", pkg, entry);
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  throw new Error(`The package ${pkg} is not installed.`);
}
