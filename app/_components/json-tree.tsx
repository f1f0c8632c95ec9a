"use client";
/** A JSON value as a collapsible tree; objects and arrays fold open to two levels. */
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
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  const summary = Array.isArray(value) ? `Array(${entries.length})` : `{${entries.length} ${entries.length === 1 ? "key" : "keys"}}`;
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
