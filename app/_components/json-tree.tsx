"use client";
/**
 * A JSON value as a collapsible tree; objects and arrays fold open to two levels. A program's value can
 * be nested thousands of levels deep, which as nested elements would take the page down: below
 * `MAX_TREE_DEPTH` the tree stops and offers the rest as raw JSON text, itself cut at `RAW_MAX_CHARS`.
 */
import { type ReactNode, useState } from "react";

/** Levels drawn as a tree before the cut. */
export const MAX_TREE_DEPTH = 20;
/** Longest raw JSON text shown for a cut subtree. */
export const RAW_MAX_CHARS = 20_000;

export function JsonTree({ value, depth = 0, label }: { value: unknown; depth?: number; label?: string }) {
  const prefix = label !== undefined ? <span className="muted">{label}: </span> : null;
  if (value === null || typeof value !== "object") {
    return (
      <div style={{ paddingLeft: depth ? 14 : 0 }}>
        {prefix}
        <span className={typeof value === "string" ? "tok-str" : "tok-num"}>{JSON.stringify(value)}</span>
      </div>
    );
  }
  if (depth >= MAX_TREE_DEPTH) return <DepthCut value={value} prefix={prefix} />;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value);
  const summary = Array.isArray(value)
    ? `Array(${entries.length})`
    : `{${entries.length} ${entries.length === 1 ? "key" : "keys"}}`;
  return (
    <details open={depth < 2} style={{ paddingLeft: depth ? 14 : 0 }}>
      <summary>
        {prefix}
        <span className="muted">{summary}</span>
      </summary>
      {entries.map(([k, v]) => (
        <JsonTree key={k} value={v} depth={depth + 1} label={k} />
      ))}
    </details>
  );
}

function DepthCut({ value, prefix }: { value: object; prefix: ReactNode }) {
  const [raw, setRaw] = useState<string | null>(null);
  return (
    <div style={{ paddingLeft: 14 }} data-testid="json-depth-cut">
      {prefix}
      <span className="muted">… deeper levels not shown</span>{" "}
      <button
        type="button"
        className="small"
        onClick={() => setRaw(raw === null ? rawText(value) : null)}
        aria-expanded={raw !== null}
      >
        {raw === null ? "Show raw JSON" : "Hide raw JSON"}
      </button>
      {raw !== null && (
        <pre
          className="small"
          data-testid="json-raw"
          style={{ whiteSpace: "pre-wrap", wordBreak: "break-all", maxHeight: 320, overflow: "auto" }}
        >
          {raw}
        </pre>
      )}
    </div>
  );
}

function rawText(value: object): string {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return "(too deeply nested to show as text)";
  }
  if (text.length <= RAW_MAX_CHARS) return text;
  return `${text.slice(0, RAW_MAX_CHARS)}… (${text.length - RAW_MAX_CHARS} more characters not shown)`;
}
