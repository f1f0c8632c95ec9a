/**
 * The catalog of bindings: connection slugs (older connections keep theirs), one binding per tool, the
 * `read_resource` / `get_prompt` bindings, each tool's default policy, and the warnings an admin sees.
 * Tools are sorted by name so the catalog is the same whatever order a server lists them in.
 */
import "server-only";
import type { AppConnection, ConnectionRecord, Policy } from "./connection";
import { assignSlugs, slugify } from "./slug";
import type { ToolEntry } from "./types";

const RESERVED_CONNECTION_SLUGS = new Set(["call", "constructor", "prototype"]);
const RESERVED_TOOL_SLUGS = ["constructor", "prototype"];

export interface Catalog {
  entries: ToolEntry[];
  slugs: Map<string, string>;
  warnings: Map<string, string[]>;
}

/** Slugs, bindings and warnings of the connections (in creation order) from their current lists. */
export function buildCatalog(conns: AppConnection[]): Catalog {
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
    if (conn.status !== "disabled") entries.push(...entriesOf(conn, slug, notes));
    warnings.set(conn.record.id, notes);
  });
  return { entries, slugs, warnings };
}

function entriesOf(conn: AppConnection, connSlug: string, notes: string[]): ToolEntry[] {
  const { record } = conn;
  const connectionUntrusted = untrustedConnection(record);
  const base = {
    connectionId: record.id,
    connectionName: record.name,
    connectionSlug: connSlug,
    connectionUntrusted,
    untrustedContent: connectionUntrusted,
  };
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
      untrustedContent: record.untrustedContent ?? (connectionUntrusted || tool.annotations?.openWorldHint === true),
    });
  });
  return entries.sort((a, b) => (a.binding < b.binding ? -1 : a.binding > b.binding ? 1 : 0));
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
/** A connection's untrusted-content flag: an admin's choice, else on for an http connection added by URL. */
export function untrustedConnection(record: ConnectionRecord): boolean {
  return record.untrustedContent ?? record.transport.type === "http";
}

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
