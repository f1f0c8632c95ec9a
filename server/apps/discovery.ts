/**
 * Discovery inside a program: `apps.$search(query, { limit })` and `apps.$describe("conn.tool")`, answered
 * from the run's own catalog (the bindings the run started with, never a `deny` tool) without calling any
 * App. The answer is recorded like a call's outcome, so a replay gets the same entries even if the
 * catalog changed since.
 */
import "server-only";
import type { CallOutcome } from "@/contracts/engine";
import { declarations, filterTools, safeText } from "./declarations";
import type { ToolEntry } from "./types";

export const DISCOVERY_BINDINGS = ["$search", "$describe"] as const;
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;

export function isDiscoveryBinding(binding: string): boolean {
  return (DISCOVERY_BINDINGS as readonly string[]).includes(binding);
}

export interface DiscoveryEntry {
  binding: string;
  title?: string;
  description: string;
  policy: ToolEntry["policy"];
}

/**
 * The outcome of a discovery call. `catalog` is the run's bindings as entries now (the caller resolves
 * them; `deny` and vanished ones already left out), `argsJson` the program's arguments.
 */
export async function discoveryOutcome(binding: string, argsJson: string, catalog: ToolEntry[]): Promise<CallOutcome> {
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(argsJson) as unknown;
    args = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as never) : {};
  } catch {
    args = {};
  }
  if (binding === "$search") {
    if (typeof args.query !== "string") return invalid("apps.$search(query): query must be a string.");
    const limit = args.limit === undefined ? DEFAULT_LIMIT : args.limit;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      return invalid(`apps.$search(query, { limit }): limit must be a whole number from 1 to ${MAX_LIMIT}.`);
    const found = filterTools(catalog, { query: args.query });
    const results = found.slice(0, limit).map(compact);
    return ok({ query: args.query, total: found.length, results });
  }
  if (typeof args.binding !== "string") return invalid('apps.$describe("conn.tool"): the binding must be a string.');
  const entry = catalog.find((e) => e.binding === args.binding);
  if (!entry) return invalid(`apps.$describe: unknown binding ${JSON.stringify(args.binding.slice(0, 200))}.`);
  const declaration = await declarations([entry], { maxBytes: 24_000 });
  return ok({ ...compact(entry), declaration });
}

function compact(e: ToolEntry): DiscoveryEntry {
  return {
    binding: e.binding,
    ...(e.title ? { title: safeText(e.title, 200) } : {}),
    description: safeText(e.description, 300),
    policy: e.policy,
  };
}

function ok(value: unknown): CallOutcome {
  return { type: "ok", resultJson: JSON.stringify(value) };
}

function invalid(message: string): CallOutcome {
  return { type: "error", name: "AppCallFailed", message, details: { reason: "invalid_arguments" } };
}
