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
import { exactly, withoutBidi } from "../_lib/visible";

/** Levels drawn as a tree before the cut. */
export const MAX_TREE_DEPTH = 20;
/** Longest raw JSON text shown for a cut subtree. */
export const RAW_MAX_CHARS = 20_000;
/** Entries of one object or array drawn before "Show all". */
export const SHOWN_ENTRIES = 100;

/** How text is shown: bidi controls escaped always, every invisible character with `exact` (see visible.ts). */
const visible = (text: string, exact: boolean) => (exact ? exactly(text) : withoutBidi(text));
const shownJson = (value: unknown, exact: boolean): string => visible(JSON.stringify(value) ?? String(value), exact);

/** `exact`: every invisible character of keys and values is shown as an escape (a decision card's arguments). */
export function JsonTree({
  value,
  depth = 0,
  label,
  exact = false,
}: {
  value: unknown;
  depth?: number;
  label?: string;
  exact?: boolean;
}) {
  const prefix = label !== undefined ? <span className="muted">{visible(label, exact)}: </span> : null;
  if (value === null || typeof value !== "object") {
    return (
      <div className="json-leaf" style={{ paddingLeft: depth ? 14 : 0 }}>
        {prefix}
        <span className={typeof value === "string" ? "tok-str" : "tok-num"}>{shownJson(value, exact)}</span>
      </div>
    );
  }
  if (depth >= MAX_TREE_DEPTH) return <DepthCut value={value} prefix={prefix} exact={exact} />;
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
      <Entries entries={entries} depth={depth} exact={exact} />
    </details>
  );
}

function Entries({ entries, depth, exact }: { entries: [string, unknown][]; depth: number; exact: boolean }) {
  const [all, setAll] = useState(false);
  const shown = all ? entries : entries.slice(0, SHOWN_ENTRIES);
  return (
    <>
      {shown.map(([k, v]) => (
        <JsonTree key={k} value={v} depth={depth + 1} label={k} exact={exact} />
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

function DepthCut({ value, prefix, exact }: { value: object; prefix: ReactNode; exact: boolean }) {
  const [raw, setRaw] = useState<string | null>(null);
  return (
    <div style={{ paddingLeft: 14 }} data-testid="json-depth-cut">
      {prefix}
      <span className="muted">… deeper levels not shown</span>{" "}
      <button
        type="button"
        className="small"
        onClick={() => setRaw(raw === null ? visible(rawText(value), exact) : null)}
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
