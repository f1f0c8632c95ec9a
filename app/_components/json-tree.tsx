"use client";
/**
 * A JSON value as a collapsible tree; objects and arrays fold open to two levels. A program's value can
 * be nested thousands of levels deep, which as nested elements would take the page down: below
 * `MAX_TREE_DEPTH` the tree stops and offers the rest as raw JSON text, itself cut at `RAW_MAX_CHARS`.
 * A long string wraps (a decision card must show every character of what is approved), and characters
 * that reorder text (bidi controls such as U+202E) are shown as escapes, so a value cannot disguise itself.
 * An object or array shows its first `SHOWN_ENTRIES` entries until asked for the rest.
 */
import { type ReactNode, useState } from "react";

/** Levels drawn as a tree before the cut. */
export const MAX_TREE_DEPTH = 20;
/** Longest raw JSON text shown for a cut subtree. */
export const RAW_MAX_CHARS = 20_000;
/** Entries of one object or array drawn before "Show all". */
export const SHOWN_ENTRIES = 100;

/** Bidirectional controls: they reorder the text around them on screen. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const shownJson = (value: unknown): string =>
  (JSON.stringify(value) ?? String(value)).replace(BIDI, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export function JsonTree({ value, depth = 0, label }: { value: unknown; depth?: number; label?: string }) {
  const prefix = label !== undefined ? <span className="muted">{label}: </span> : null;
  if (value === null || typeof value !== "object") {
    return (
      <div className="json-leaf" style={{ paddingLeft: depth ? 14 : 0 }}>
        {prefix}
        <span className={typeof value === "string" ? "tok-str" : "tok-num"}>{shownJson(value)}</span>
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
      <Entries entries={entries} depth={depth} />
    </details>
  );
}

function Entries({ entries, depth }: { entries: [string, unknown][]; depth: number }) {
  const [all, setAll] = useState(false);
  const shown = all ? entries : entries.slice(0, SHOWN_ENTRIES);
  return (
    <>
      {shown.map(([k, v]) => (
        <JsonTree key={k} value={v} depth={depth + 1} label={k} />
      ))}
      {shown.length < entries.length && (
        <div style={{ paddingLeft: 14 }}>
          <button type="button" className="small" onClick={() => setAll(true)}>
            Show all {entries.length} entries
          </button>
        </div>
      )}
    </>
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
