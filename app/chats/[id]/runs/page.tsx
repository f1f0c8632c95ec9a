"use client";
/** Every code run of a chat, filterable by status; each opens its full record. */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { use, useEffect, useRef, useState } from "react";
import { CODE_RUN_STATUSES } from "@/contracts/code-run";
import { AppShell } from "../../../_components/app-shell";
import { JsonTree } from "../../../_components/json-tree";
import { RunCard } from "../../../_components/run-card";
import { useTRPC } from "../../../_lib/trpc";

function Runs({ chatId }: { chatId: string }) {
  const trpc = useTRPC();
  const runs = useQuery(trpc.codeRuns.listByChat.queryOptions({ chatId }));
  const [status, setStatus] = useState<string>("all");
  const [open, setOpen] = useState<string | null>(null);
  const record = useRef<HTMLDivElement>(null);
  // An opened record shows below the list: bring it into view once, when it opens.
  useEffect(() => {
    if (open) record.current?.scrollIntoView({ block: "nearest" });
  }, [open]);
  if (runs.error)
    return (
      <p role="alert" className="error-text">
        {runs.error.message}
      </p>
    );
  const shown = (runs.data ?? []).filter((r) => status === "all" || r.status === status).reverse();
  const openRun = open ? runs.data?.find((r) => r.id === open) : undefined;
  return (
    <div className="stack">
      <div className="row">
        <Link href={`/chats/${chatId}`}>← Back to the chat</Link>
        <label className="row small" style={{ marginLeft: "auto" }}>
          <span>Status</span>
          <select
            aria-label="Status filter"
            value={status}
            onChange={(e) => setStatus(e.target.value)}
            style={{ width: "auto" }}
          >
            <option value="all">all</option>
            {CODE_RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <table className="calls panel" aria-label="Code runs">
        <thead>
          <tr>
            <th>Status</th>
            <th>Program</th>
            <th>Reason</th>
            <th>Calls</th>
            <th>Started</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.id} data-testid="run-row">
              <td>
                <span className={`status ${r.status}`}>{r.status}</span>
              </td>
              <td>
                <code className="small" title={r.code.slice(0, 2000)} data-testid="run-row-program">
                  {programLine(r.code)}
                </code>
                {r.calls.length > 0 && (
                  <div className="small muted" data-testid="run-row-bindings">
                    {bindingsLine(r.calls.map((c) => `apps.${c.binding}`))}
                  </div>
                )}
              </td>
              <td>{r.reason || <span className="muted">—</span>}</td>
              <td>{r.calls.length}</td>
              <td className="small muted">
                {new Date(r.createdAt).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" })}
              </td>
              <td>
                <button
                  type="button"
                  onClick={() => setOpen(open === r.id ? null : r.id)}
                  aria-expanded={open === r.id}
                >
                  {open === r.id ? "Close" : "Open"}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown.length === 0 && <p className="muted">No runs{status === "all" ? "" : ` with status ${status}`}.</p>}
      {openRun && (
        <div className="stack" data-testid="run-record" ref={record}>
          <RunCard run={openRun} />
          <details className="panel small">
            <summary>Full record</summary>
            <JsonTree value={openRun} />
          </details>
        </div>
      )}
    </div>
  );
}

/** The bindings a run called, each once with how often, in the order first called: "apps.work_calendar.list_events ×2, apps.email.send_email". */
function bindingsLine(bindings: readonly string[], max = 3): string {
  const counts = new Map<string, number>();
  for (const b of bindings) counts.set(b, (counts.get(b) ?? 0) + 1);
  const named = [...counts].slice(0, max).map(([b, n]) => (n > 1 ? `${b} ×${n}` : b));
  const more = counts.size - named.length;
  return named.join(", ") + (more > 0 ? `, +${more} more` : "");
}

/** What tells a run apart in the list: its program's first line that is not blank or a comment, cut at 80 characters. */
function programLine(code: string): string {
  const line =
    code
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "" && !l.startsWith("//")) ?? code.trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line || "(empty)";
}

export default function ChatRunsPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  return (
    <AppShell>
      {() => (
        <div className="stack">
          <h1 style={{ margin: 0 }}>Code runs</h1>
          <Runs chatId={id} />
        </div>
      )}
    </AppShell>
  );
}
