/**
 * The bounded, deterministic index of bindings that the openbot_run_code description carries: one line
 * per binding with a compact input hint and, where the tool declares an output schema, the type of its
 * structuredContent (`-> ?` when unknown). Only names and types derived from schemas appear, each
 * quoted when it is not a plain identifier; tool descriptions (untrusted text) never do.
 */
import "server-only";
import type { ToolEntry } from "../../apps/registry";

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema | Schema[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  additionalProperties?: boolean | Schema;
};

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string) => (IDENT.test(name) && name.length <= 40 ? name : JSON.stringify(name.slice(0, 40)));
const literal = (v: unknown) => {
  const text = JSON.stringify(v) ?? "unknown";
  return text.length > 30 ? "unknown" : text;
};

/** A TypeScript-like type for a JSON Schema, at most `budget` characters (else undefined). */
export function compactType(schema: unknown, budget = 160, depth = 0): string | undefined {
  const out = render(schema as Schema | undefined, depth);
  return out.length <= budget ? out : undefined;
}

function render(s: Schema | undefined, depth: number): string {
  if (!s || typeof s !== "object") return "unknown";
  if (depth > 4) return "unknown";
  if (s.const !== undefined) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.slice(0, 8).map(literal).join(" | ") + (s.enum.length > 8 ? " | …" : "");
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union))
    return union
      .slice(0, 5)
      .map((u) => render(u, depth + 1))
      .join(" | ");
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ["object"] : [];
  if (type.length > 1) return type.map((t) => render({ ...s, type: t }, depth)).join(" | ");
  switch (type[0]) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = Array.isArray(s.items) ? s.items[0] : s.items;
      const inner = render(item, depth + 1);
      return /[|\s]/.test(inner) && !inner.startsWith("{") ? `(${inner})[]` : `${inner}[]`;
    }
    case "object": {
      const props = Object.entries(s.properties ?? {});
      if (props.length === 0) return s.additionalProperties === false ? "{}" : "Record<string, unknown>";
      const required = new Set(s.required ?? []);
      const fields = props
        .slice(0, 12)
        .map(([name, p]) => `${key(name)}${required.has(name) ? "" : "?"}: ${render(p, depth + 1)}`);
      if (props.length > 12) fields.push("…");
      return `{ ${fields.join("; ")} }`;
    }
    default:
      return "unknown";
  }
}

/** One index line: `apps.work_calendar.list_events({ day: string }) -> { events: … }`. */
export function indexLine(entry: ToolEntry): string {
  const input = compactType(entry.inputSchema, 120) ?? "{ … }";
  const output = entry.outputSchema ? compactType(entry.outputSchema, 160) : undefined;
  return `apps.${entry.binding}(${input === "{}" ? "{}" : input}) -> ${output ? `structuredContent: ${output}` : "?"}`;
}

export interface IndexBudget {
  /** Characters of fully typed lines (input hint and output type). Default 700. */
  typedChars?: number;
  /** Characters of the names-only lines that follow, grouped by app. Default 500. */
  namesChars?: number;
}

/**
 * The index in the registry's stable order: fully typed lines while they fit `typedChars`, then the
 * remaining bindings by name, grouped by app, while they fit `namesChars`, then a line saying how many
 * were left out. Bounded whatever the catalog's size, and the same for the same catalog.
 */
export function bindingIndex(tools: readonly ToolEntry[], budget: IndexBudget = {}): string[] {
  const typedChars = budget.typedChars ?? 700;
  const namesChars = budget.namesChars ?? 500;
  const lines: string[] = [];
  let used = 0;
  let i = 0;
  for (; i < tools.length; i++) {
    const line = indexLine(tools[i]!);
    if (used + line.length > typedChars) break;
    lines.push(line);
    used += line.length + 1;
  }
  const rest = tools.slice(i);
  const byApp = new Map<string, string[]>();
  for (const t of rest) {
    const [app = "", capability = ""] = t.binding.split(".");
    byApp.set(app, [...(byApp.get(app) ?? []), capability]);
  }
  let named = 0;
  used = 0;
  for (const [app, capabilities] of byApp) {
    const line = `apps.${app}: ${capabilities.join(", ")}`;
    if (used + line.length > namesChars) break;
    lines.push(line);
    used += line.length + 1;
    named += capabilities.length;
  }
  const left = rest.length - named;
  if (left > 0) lines.push(`… ${left} more: find them with openbot_code_api.`);
  return lines;
}
