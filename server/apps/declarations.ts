/**
 * TypeScript declarations of the bindings (what `openbot_code_api` returns): `declare const apps` with
 * one method per binding, its argument type generated from the tool's input schema and its
 * `structuredContent` type from the output schema (json-schema-to-typescript), descriptions as JSDoc.
 * Everything from an App is untrusted: schemas are rebuilt from an allowlist of keywords (no `tsType`, no
 * external `$ref`, no titles), and descriptions are escaped so they cannot end a comment.
 */
import "server-only";
import { compile } from "json-schema-to-typescript";
import type { ToolEntry } from "./registry";

export interface DeclarationOptions {
  /** Words that must all occur in the binding, name, title, description or connection name (case-insensitive). */
  query?: string;
  /** A connection slug, name or id. */
  connection?: string;
  /** Upper bound of the output in bytes. Default 24000, at least 2000. */
  maxBytes?: number;
}

const PRELUDE = `// OpenBot App bindings: call apps.<connection>.<capability>(args) or apps.call("<connection>.<capability>", args).
// A call returns the App's MCP result; a failed call throws an Error named AppCallDenied, AppCallFailed
// (details.reason: timeout | unavailable | tool_error | invalid_arguments), AppInputRequired or VaultDenied.
/** The MCP result of an App call. */
interface McpResult<S = Record<string, unknown> | undefined> {
  content: McpContent[];
  structuredContent: S;
  isError?: false;
}
type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: "resource_link"; uri: string; name: string; description?: string; mimeType?: string };
`;

const COMPILE_OPTIONS = {
  bannerComment: "",
  format: false,
  additionalProperties: false,
  unknownAny: true,
  ignoreMinAndMaxItems: true,
  strictIndexSignatures: true,
  declareExternallyReferenced: true,
  $refOptions: { resolve: { external: false } },
} as const;

const MAX_SCHEMA_JSON = 64_000;
const MAX_DEPTH = 24;

export async function declarations(tools: ToolEntry[], opts: DeclarationOptions = {}): Promise<string> {
  const maxBytes = Math.max(opts.maxBytes ?? 24_000, 2000);
  const chosen = filterTools(tools, opts);
  const blocks = await Promise.all(chosen.map((t) => toolBlock(t)));
  const groups = new Map<string, { name: string; members: string[]; helpers: string[] }>();
  let size = Buffer.byteLength(PRELUDE) + 400;
  let left = 0;
  for (const [i, block] of blocks.entries()) {
    const tool = chosen[i];
    if (!tool) continue;
    const cost =
      Buffer.byteLength(block.member) + Buffer.byteLength(block.helper) + (groups.has(tool.connectionSlug) ? 0 : 80);
    if (left > 0 || size + cost > maxBytes) {
      left += 1;
      continue;
    }
    size += cost;
    const group = groups.get(tool.connectionSlug) ?? { name: tool.connectionName, members: [], helpers: [] };
    group.members.push(block.member);
    if (block.helper) group.helpers.push(block.helper);
    groups.set(tool.connectionSlug, group);
  }
  const out = [PRELUDE];
  for (const group of groups.values()) out.push(...group.helpers);
  out.push("declare const apps: {");
  for (const [slug, group] of groups) {
    out.push(indent(jsdoc(`App "${group.name}"`), 1), `  ${propertyName(slug)}: {`, ...group.members, "  };");
  }
  out.push(
    '  /** Calls a binding by name: apps.call("work_calendar.list_events", { day: "2026-10-23" }). */',
    "  call(binding: string, args?: Record<string, unknown>): Promise<McpResult>;",
    "};",
  );
  if (!chosen.length) out.push("// No binding matches this search.");
  if (left)
    out.push(
      `// ${left} more binding${left === 1 ? "" : "s"} left out to stay under ${maxBytes} bytes: narrow the search by word or connection.`,
    );
  return `${out.join("\n")}\n`;
}

/** The tools every word of `query` occurs in (binding, name, title, description, connection), in their order. */
export function filterTools(tools: ToolEntry[], opts: DeclarationOptions): ToolEntry[] {
  let chosen = [...tools];
  const conn = opts.connection?.trim().toLowerCase();
  if (conn) {
    chosen = chosen.filter(
      (t) =>
        t.connectionSlug === conn || t.connectionName.toLowerCase() === conn || t.connectionId.toLowerCase() === conn,
    );
  }
  const words = (opts.query ?? "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  if (words.length) {
    chosen = chosen.filter((t) => {
      const hay = [t.binding, t.name, t.title ?? "", t.description, t.connectionName]
        .join(" ")
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, " ");
      return words.every((w) => hay.includes(w));
    });
  }
  return chosen;
}

interface Block {
  /** The method inside `apps.<connection>`. */
  member: string;
  /** A namespace for types that cannot be written inline (named definitions, recursion). */
  helper: string;
}

const typeCache = new WeakMap<object, Map<string, Promise<Compiled>>>();

interface Compiled {
  inline?: string;
  body?: string;
}

async function toolBlock(tool: ToolEntry): Promise<Block> {
  const ns = `Apps$${tool.connectionSlug}$${tool.binding.slice(tool.connectionSlug.length + 1)}`.replace(
    /[^\w$]/g,
    "_",
  );
  const args = await typeOf(tool.inputSchema, "Args");
  const result = tool.outputSchema ? await typeOf(tool.outputSchema, "Result") : undefined;
  const helperBodies: string[] = [];
  const named = (part: { inline?: string; body?: string }, name: string): string => {
    if (part.inline !== undefined) return part.inline;
    if (!part.body) return "Record<string, unknown>";
    helperBodies.push(part.body);
    return `${ns}.${name}`;
  };
  const argsType = named(args, "Args");
  const resultType = result ? named(result, "Result") : undefined;
  const helper = helperBodies.length ? `declare namespace ${ns} {\n${indent(helperBodies.join("\n"), 1)}\n}` : "";
  const policy =
    tool.policy === "allow"
      ? ""
      : tool.policy === "ask"
        ? "Needs a person's approval before it runs."
        : "Denied by policy: calls fail.";
  const notes = [tool.description || tool.title || "", policy].filter(Boolean).join("\n\n");
  const optional = !required(tool.inputSchema) ? "?" : "";
  const signature = `${propertyName(tool.binding.slice(tool.connectionSlug.length + 1))}(args${optional}: ${argsType}): Promise<McpResult${resultType ? `<${resultType}>` : ""}>;`;
  return { member: `${indent(jsdoc(notes), 2)}\n${indent(signature, 2)}`, helper };
}

function required(schema: Record<string, unknown>): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}

/** The TypeScript type of a schema: inline when it compiles to one declaration, else a namespace body. */
function typeOf(schema: Record<string, unknown>, name: "Args" | "Result"): Promise<Compiled> {
  const byName = typeCache.get(schema) ?? new Map<string, Promise<Compiled>>();
  typeCache.set(schema, byName);
  let compiled = byName.get(name);
  if (!compiled) {
    compiled = compileType(schema, name);
    byName.set(name, compiled);
  }
  return compiled;
}

async function compileType(schema: Record<string, unknown>, name: string): Promise<Compiled> {
  if (JSON.stringify(schema).length > MAX_SCHEMA_JSON) return {};
  let text: string;
  try {
    // Line separators can only remain inside string literals (descriptions are cleaned): escape them.
    text = (await compile(clean(schema, 0) as never, name, COMPILE_OPTIONS))
      .trim()
      .replace(/\u2028/g, "\\u2028")
      .replace(/\u2029/g, "\\u2029");
  } catch {
    return {};
  }
  const declarations = text.match(/^export /gm)?.length ?? 0;
  if (declarations === 1) {
    const iface = new RegExp(`^(?:/\\*\\*[\\s\\S]*?\\*/\\n)?export interface ${name} (\\{[\\s\\S]*\\})$`).exec(text);
    if (iface?.[1]) return { inline: reindent(iface[1]) };
    const alias = new RegExp(`^(?:/\\*\\*[\\s\\S]*?\\*/\\n)?export type ${name} = ([\\s\\S]*)$`).exec(text);
    if (alias?.[1]) return { inline: reindent(alias[1]) };
  }
  return { body: reindent(text) };
}

const SCHEMA_MAPS = ["properties", "patternProperties", "definitions", "$defs"] as const;
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"] as const;
const SCHEMA_ONE = ["additionalProperties", "items", "not"] as const;
const PLAIN = [
  "type",
  "required",
  "enum",
  "const",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "nullable",
  "deprecated",
] as const;

/** Rebuilds a schema from known keywords only; descriptions are escaped, `$ref` kept only within the schema. */
function clean(schema: unknown, depth: number): unknown {
  if (typeof schema === "boolean") return schema;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema) || depth > MAX_DEPTH) return {};
  const src = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of PLAIN) if (key in src && isJson(src[key])) out[key] = src[key];
  if (typeof src.description === "string") out.description = safeText(src.description, 1000);
  if (typeof src.$ref === "string" && src.$ref.startsWith("#/")) out.$ref = src.$ref;
  for (const key of SCHEMA_MAPS) {
    const map = src[key];
    if (typeof map === "object" && map !== null && !Array.isArray(map)) {
      out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, clean(v, depth + 1)]));
    }
  }
  for (const key of SCHEMA_LISTS) {
    const list = src[key];
    if (Array.isArray(list)) out[key] = list.map((v) => clean(v, depth + 1));
  }
  for (const key of SCHEMA_ONE) {
    const one = src[key];
    if (one !== undefined) out[key] = Array.isArray(one) ? one.map((v) => clean(v, depth + 1)) : clean(one, depth + 1);
  }
  if (Array.isArray(out.required)) out.required = (out.required as unknown[]).filter((r) => typeof r === "string");
  return out;
}

function isJson(value: unknown): boolean {
  return (
    value === null ||
    ["string", "number", "boolean"].includes(typeof value) ||
    (typeof value === "object" && !(value instanceof Date))
  );
}

/** Untrusted text made safe inside a block comment: no comment end, no control characters, bounded. */
export function safeText(text: string, max = 2000): string {
  const clipped = text.length > max ? `${text.slice(0, max)}…` : text;
  return clipped
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, "\n")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ")
    .replace(/\*\//g, "*\\/")
    .replace(/\n{3,}/g, "\n\n");
}

function jsdoc(text: string): string {
  const lines = safeText(text).split("\n");
  return ["/**", ...lines.map((l) => (l ? ` * ${l.replace(/^\s*@/, "\\@")}` : " *")), " */"].join("\n");
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function indent(text: string, levels: number): string {
  const pad = "  ".repeat(levels);
  return text
    .split("\n")
    .map((l) => (l ? pad + l : l))
    .join("\n");
}

/** Indents the unformatted compiler output by brace depth, leaving comment lines' contents alone. */
function reindent(text: string): string {
  let depth = 0;
  let inComment = false;
  const lines: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    if (inComment || line.startsWith("/**") || line.startsWith("*")) {
      if (line.startsWith("/**")) inComment = true;
      lines.push(`${"  ".repeat(depth)}${line.startsWith("*") ? ` ${line}` : line}`);
      if (line.endsWith("*/")) inComment = false;
      continue;
    }
    const closes = /^[}\])]/.test(line) ? 1 : 0;
    depth = Math.max(depth - closes, 0);
    lines.push(`${"  ".repeat(depth)}${line}`);
    depth = Math.max(depth + (line.match(/[{[(]/g)?.length ?? 0) - (line.match(/[}\])]/g)?.length ?? 0) + closes, 0);
  }
  return lines.join("\n").replace(/\{\n\s*\}/g, "{}");
}
