/**
 * Connection transports: the zod schema of what an admin may configure (stdio command, Streamable HTTP
 * URL, a preset of the npm reference servers, or a built-in app) and the SDK client transport for each.
 * Presets run from node_modules with this Node binary, their files under `<dataDir>/apps/<connectionId>/`.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import { BUILTIN_APPS, type BuiltinHost } from "./builtin/host";
import { ConnectionConfigError } from "./errors";

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name");
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name");

const StdioTransport = z.strictObject({
  type: z.literal("stdio"),
  command: z.string().min(1).max(4096),
  args: z.array(z.string().max(4096)).max(256).optional(),
  env: z.record(envName, z.string().max(65536)).optional(),
});
const HttpTransport = z.strictObject({
  type: z.literal("http"),
  url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  headers: z.record(headerName, z.string().max(8192)).optional(),
});
export const PRESETS = ["everything", "memory", "filesystem"] as const;
const PresetTransport = z.strictObject({ type: z.literal("preset"), preset: z.enum(PRESETS) });
const BuiltinTransport = z.strictObject({ type: z.literal("builtin"), app: z.enum(BUILTIN_APPS) });

export const TransportSchema = z.discriminatedUnion("type", [StdioTransport, HttpTransport, PresetTransport, BuiltinTransport], {
  error: 'must be an object with "type": "stdio", "http", "preset" or "builtin"',
});
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
  const hide = (r: Record<string, string> | undefined) => r && Object.fromEntries(Object.keys(r).map((k) => [k, "••••"]));
  if (t.type === "stdio") return { ...t, ...(t.env ? { env: hide(t.env) } : {}) };
  if (t.type === "http") return { ...t, ...(t.headers ? { headers: hide(t.headers) } : {}) };
  return t;
}

export interface OpenedTransport {
  transport: Transport;
  /** The child's process id (stdio only). */
  pid(): number | null;
  /** The last lines the child wrote to stderr (stdio only). */
  stderrTail(): string;
}

export interface TransportContext {
  connectionId: string;
  dataDir: string;
  builtin: BuiltinHost;
}

export function openTransport(config: TransportConfig, ctx: TransportContext): OpenedTransport {
  switch (config.type) {
    case "stdio":
      return stdio(config.command, config.args ?? [], config.env ?? {});
    case "preset":
      return preset(config.preset, ctx);
    case "http": {
      const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers ?? {} },
        reconnectionOptions: { maxRetries: 2, initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2 },
      });
      return { transport, pid: () => null, stderrTail: () => "" };
    }
    case "builtin": {
      const transport = new StreamableHTTPClientTransport(ctx.builtin.url(config.app), { requestInit: { headers: ctx.builtin.headers } });
      return { transport, pid: () => null, stderrTail: () => "" };
    }
  }
}

function preset(name: (typeof PRESETS)[number], ctx: TransportContext): OpenedTransport {
  const dir = path.join(ctx.dataDir, "apps", ctx.connectionId);
  switch (name) {
    case "everything":
      return stdio(process.execPath, [packageBin("@modelcontextprotocol/server-everything"), "stdio"], {});
    case "memory":
      mkdirSync(dir, { recursive: true });
      return stdio(process.execPath, [packageBin("@modelcontextprotocol/server-memory")], { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") });
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
  return { transport, pid: () => transport.pid, stderrTail: () => tail.trim() };
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
