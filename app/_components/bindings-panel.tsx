"use client";
/** The bindings' TypeScript declarations beside the program composer, searchable by word or app. */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../_lib/trpc";

export function BindingsPanel() {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState("");
  const api = useQuery({
    ...trpc.connections.codeApi.queryOptions({ query: query.trim() || undefined }),
    enabled: open,
  });
  return (
    <details className="panel small" onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="bindings-panel">
      <summary>Bindings you can call (TypeScript declarations)</summary>
      <div className="stack" style={{ marginTop: 10 }}>
        <input
          aria-label="Search bindings"
          placeholder="Search by word, e.g. email or list"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        {api.error && (
          <p role="alert" className="error-text">
            {api.error.message}
          </p>
        )}
        <pre style={{ maxHeight: 360 }} data-testid="bindings-declarations">
          {api.data?.declarations ?? "Loading…"}
        </pre>
      </div>
    </details>
  );
}
