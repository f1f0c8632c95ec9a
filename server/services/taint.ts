/**
 * What a run has read so far, for the gateway's check and the decision card: whether it read from a
 * source of untrusted content (a recorded outcome of a tool marked so: see ToolEntry.untrustedContent),
 * and for each argument string of a new call which earlier call's result it came from (a shared
 * substring of at least PROVENANCE_MIN characters).
 */
import "server-only";
import type { CallOutcome } from "@/contracts/engine";
import type { ToolEntry } from "../apps/registry";
import type { Platform } from "../platform";

export const PROVENANCE_MIN = 20;
/** How much of one result is searched, and how many windows of one argument string. */
const MAX_RESULT_CHARS = 1_000_000;
const MAX_WINDOWS = 4_000;

export interface RunRead {
  index: number;
  binding: string;
  appName: string;
  untrusted: boolean;
  texts: string[];
}

export interface Provenance {
  /** Where in the arguments: `body`, `items.0.text`. */
  path: string;
  from: { index: number; binding: string }[];
}

interface ReadRow {
  idx: number;
  binding: string;
  source: string;
  outcome_enc: string;
}

function stringsOf(value: unknown, out: string[], budget: { left: number }, depth = 0): void {
  if (budget.left <= 0 || depth > 64) return;
  if (typeof value === "string") {
    out.push(value.slice(0, budget.left));
    budget.left -= value.length;
  } else if (Array.isArray(value)) {
    for (const v of value) stringsOf(v, out, budget, depth + 1);
  } else if (value && typeof value === "object") {
    for (const v of Object.values(value)) stringsOf(v, out, budget, depth + 1);
  }
}

/** The calls of this run that reached an App and have an outcome, in index order; `texts` only when asked (decrypted). */
export async function runReads(platform: Platform, runId: string, withTexts = true): Promise<RunRead[]> {
  const rows = await platform.db.query<ReadRow>(
    `select idx, binding, source, ${withTexts ? "outcome_enc" : "'' as outcome_enc"} from code_run_calls
     where run_id = $1 and outcome_enc is not null and operation_id is not null order by idx`,
    [runId],
  );
  const tools = platform.apps.tools();
  return rows.map((r) => {
    const source = JSON.parse(r.source) as { connectionId: string; connectionName: string; name: string };
    const entry = tools.find((t) => t.connectionId === source.connectionId && t.name === source.name);
    const texts: string[] = [];
    if (withTexts) {
      const outcome = JSON.parse(
        platform.open(`code_run_calls:${runId}:${r.idx}:outcome`, r.outcome_enc),
      ) as CallOutcome;
      const budget = { left: MAX_RESULT_CHARS };
      if (outcome.type === "ok") stringsOf(JSON.parse(outcome.resultJson) as unknown, texts, budget);
      else stringsOf([outcome.message, outcome.details], texts, budget);
    }
    return {
      index: r.idx,
      binding: r.binding,
      appName: entry?.connectionName ?? source.connectionName,
      // A tool that is gone can no longer say it is trusted.
      untrusted: entry ? entry.untrustedContent === true : true,
      texts,
    };
  });
}

/** "this program read content from Web, which may contain instructions", or null if it read none. */
export function taintReason(reads: RunRead[]): string | null {
  const apps = [...new Set(reads.filter((r) => r.untrusted).map((r) => r.appName))];
  if (apps.length === 0) return null;
  return `this program read content from ${apps.join(", ")}, which may contain instructions`;
}

export const isReadOnly = (entry: ToolEntry) => entry.annotations?.readOnlyHint === true;

/** For each argument string of at least PROVENANCE_MIN characters: the earlier calls whose results share such a substring with it. */
export function provenance(args: unknown, reads: RunRead[]): Provenance[] {
  const strings: { path: string; value: string }[] = [];
  const walk = (value: unknown, path: string[], depth: number) => {
    if (depth > 64) return;
    if (typeof value === "string") {
      if (value.length >= PROVENANCE_MIN) strings.push({ path: path.join("."), value });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, [...path, String(i)], depth + 1);
      });
    } else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k], depth + 1);
    }
  };
  walk(args, [], 0);
  if (strings.length === 0) return [];
  // Every window of PROVENANCE_MIN characters of the argument strings, then one pass over each result.
  const windows = new Map<string, Set<number>>();
  strings.forEach(({ value }, n) => {
    const limit = Math.min(value.length - PROVENANCE_MIN, MAX_WINDOWS);
    for (let i = 0; i <= limit; i++) {
      const w = value.slice(i, i + PROVENANCE_MIN);
      const set = windows.get(w) ?? new Set<number>();
      set.add(n);
      windows.set(w, set);
    }
  });
  const from = strings.map(() => [] as { index: number; binding: string }[]);
  for (const read of reads) {
    const hit = new Set<number>();
    for (const text of read.texts) {
      for (let i = 0; i + PROVENANCE_MIN <= text.length && hit.size < strings.length; i++) {
        const set = windows.get(text.slice(i, i + PROVENANCE_MIN));
        if (set) for (const n of set) hit.add(n);
      }
    }
    for (const n of hit) from[n]!.push({ index: read.index, binding: read.binding });
  }
  return strings.flatMap((s, n) => (from[n]!.length ? [{ path: s.path, from: from[n]! }] : []));
}
