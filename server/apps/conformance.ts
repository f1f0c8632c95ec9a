/**
 * The MCP conformance suite's client under test: OUR connection code (`AppConnection` over the `http`
 * transport, exactly as the registry opens an admin's http connection) driven through one scenario. It
 * connects (the protocol revision is chosen by what the server supports), lists, and calls what the
 * scenario offers the way OpenBot would: the tool calls the scenario's context names, else each listed
 * tool with arguments made from its input schema, then the first resource and the first prompt. An App's
 * question is answered with the schema's defaults (as the run card pre-fills them for a person).
 * `scripts/mcp-conformance-client.mjs` runs it; auth scenarios go to `server/apps/oauth/conformance.ts`.
 */
import "server-only";
import type { BuiltinHost } from "./builtin/host";
import { AppConnection, type ConnectionDeps, type Operation } from "./connection";
import { defaultsOf } from "./elicitation";
import { isAppCallError } from "./errors";

export interface ConformanceContext {
  toolCalls?: { name: string; arguments?: Record<string, unknown> }[];
  [key: string]: unknown;
}

/** The http connection is the only transport here: the built-in host is never asked for. */
const NO_BUILTIN: BuiltinHost = {
  connect: () => {
    throw new Error("The conformance client has no built-in apps.");
  },
  close: async () => undefined,
};

/**
 * The connection the conformance client drives: OpenBot's own `AppConnection` to the suite's server over
 * http, without retries (a scenario is one attempt), with `onInput` answering an App's question and
 * `authorize` for the auth scenarios (oauth/conformance.ts).
 */
export function conformanceConnection(
  serverUrl: string,
  deps: Pick<ConnectionDeps, "onInput" | "authorize">,
): AppConnection {
  return new AppConnection(
    {
      id: "conn_conformance",
      name: "conformance",
      transport: { type: "http", url: serverUrl },
      enabled: true,
      policies: {},
      builtin: null,
      untrustedContent: null,
      createdAt: Date.now(),
    },
    {
      dataDir: process.cwd(),
      builtin: NO_BUILTIN,
      connectTimeoutMs: 20_000,
      inputTimeoutMs: 10_000,
      retryMinMs: 60_000,
      retryMaxMs: 60_000,
      onChange: () => undefined,
      ...deps,
    },
  );
}

/** Runs one non-auth scenario against `serverUrl`; rejects when the connection cannot be made. */
export async function runScenario(serverUrl: string, scenario: string, context: ConformanceContext): Promise<void> {
  const log = (line: string) => process.stderr.write(`[${scenario}] ${line}\n`);
  const conn = conformanceConnection(serverUrl, {
    onInput: (input) => {
      const content = defaultsOf(input.requestedSchema);
      log(`input asked (${input.message.slice(0, 80)}): answering with the schema's defaults`);
      input.answer({ action: "accept", content }).catch((e: unknown) => {
        log(`the defaults do not answer it (${String(e)}): declining`);
        if (input.state === "pending") input.answer({ action: "decline" }).catch(() => undefined);
      });
    },
  });
  try {
    await conn.start();
    if (conn.status !== "connected") throw new Error(`connecting failed: ${conn.error ?? conn.status}`);
    log(`connected (${conn.protocolVersion() ?? "unknown"}): ${conn.tools.length} tools`);
    for (const op of operations(conn, context)) await run(conn, op, log);
    // A scenario may exercise the standalone stream (reconnects after `retry`): give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  } finally {
    await conn.stop();
  }
}

function operations(conn: AppConnection, context: ConformanceContext): Operation[] {
  if (context.toolCalls?.length)
    return context.toolCalls.map((c) => ({ kind: "tool", name: c.name, args: c.arguments ?? {} }));
  const ops: Operation[] = conn.tools.map((tool) => ({
    kind: "tool",
    name: tool.name,
    args: sampleArgs(tool.name, tool.inputSchema as Record<string, unknown>),
  }));
  const resource = conn.resources[0];
  if (resource) ops.push({ kind: "resource", uri: resource.uri });
  const prompt = conn.prompts[0];
  if (prompt)
    ops.push({
      kind: "prompt",
      name: prompt.name,
      args: Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, "test"])),
    });
  return ops;
}

async function run(conn: AppConnection, op: Operation, log: (line: string) => void): Promise<void> {
  const label = op.kind === "resource" ? op.uri : op.name;
  const outcome = await conn
    .call(op, { timeoutMs: 10_000, binding: `conformance.${label}` })
    .then(() => "ok")
    .catch(async (error: unknown) => {
      if (isAppCallError(error) && error.reason === "input_required" && error.input)
        return error.input.result.then(
          () => "ok after input",
          (e: unknown) => `failed after input: ${String(e)}`,
        );
      return `failed: ${isAppCallError(error) ? `${error.reason}: ${error.message}` : String(error)}`;
    });
  log(`${op.kind} ${label}: ${outcome}`);
}

/** Arguments from a tool's input schema: defaults, else the first enum value, else a plain sample per type. */
function sampleArgs(toolName: string, schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const args: Record<string, unknown> = {};
  let n = 2;
  for (const [name, prop] of Object.entries(properties)) {
    if ("default" in prop) args[name] = prop.default;
    else if (Array.isArray(prop.enum) && prop.enum.length) args[name] = prop.enum[0];
    else if (prop.type === "number" || prop.type === "integer") args[name] = n++;
    else if (prop.type === "boolean") args[name] = true;
    else if (prop.type === "array") args[name] = [];
    else if (prop.type === "object") args[name] = {};
    else args[name] = `${toolName} ${name}`;
  }
  return args;
}
