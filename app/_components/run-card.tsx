"use client";
/** One code run: its program, status, log lines, App calls with status and duration, and its value. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import type { CodeRunRecord } from "@/contracts/code-run";
import { useTRPC } from "../_lib/trpc";
import type { LogLine } from "@/contracts/engine";
import { CodeView } from "./code-view";
import { JsonTree } from "./json-tree";

export function RunCard({ run, liveLogs }: { run: CodeRunRecord; liveLogs?: LogLine[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const cancel = useMutation(trpc.codeRuns.cancel.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }));
  const result = run.result;
  const logs = result?.logs ?? liveLogs ?? [];
  return (
    <article className="run-card" data-testid="run-card" data-status={run.status} aria-label={`Code run ${run.id}`}>
      <header>
        <span className={`status ${run.status}`} data-testid="run-status">{run.status}</span>
        <strong style={{ flex: 1 }}>{run.reason || "Program"}</strong>
        <span className="muted small">{new Date(run.createdAt).toLocaleTimeString()}</span>
        {(run.status === "Running" || run.status === "Waiting") && (
          <button type="button" onClick={() => cancel.mutate({ id: run.id })} disabled={cancel.isPending}>
            Cancel run
          </button>
        )}
      </header>
      <section>
        <CodeView code={run.code} />
      </section>
      {logs.length > 0 && (
        <section>
          <h4>Log</h4>
          <ul className="logs" data-testid="run-logs">
            {logs.map((l, i) => (
              <li key={i} className={l.level}>
                {l.level !== "log" ? `[${l.level}] ` : ""}
                {l.text}
              </li>
            ))}
          </ul>
        </section>
      )}
      {run.calls.length > 0 && (
        <section>
          <h4>Calls</h4>
          <table className="calls" data-testid="run-calls">
            <thead>
              <tr><th>#</th><th>Binding</th><th>Status</th><th>Time</th></tr>
            </thead>
            <tbody>
              {run.calls.map((c) => (
                <tr key={c.index}>
                  <td>{c.index}</td>
                  <td><code>apps.{c.binding}</code></td>
                  <td>{c.rejection ? <span className="error-text">{c.rejection.name}</span> : (c.app?.status ?? "—")}</td>
                  <td className="muted">{c.app?.finishedAt ? `${c.app.finishedAt - c.app.startedAt} ms` : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {result?._tag === "Completed" && (
        <section>
          <h4>Value</h4>
          <div data-testid="run-value" className="small" style={{ fontFamily: "var(--mono)" }}>
            <JsonTree value={result.value} />
          </div>
        </section>
      )}
      {result?._tag === "Failed" && (
        <section>
          <h4>Failure</h4>
          <p className="error-text" data-testid="run-failure" style={{ margin: 0 }}>
            <strong>{result.reason}</strong>: {result.message}
          </p>
          <p className="muted small" style={{ margin: 0 }}>Error id {result.errorId}</p>
          {result.reason === "Unavailable" && /Code Mode is off/.test(result.message) && (
            <p className="small" style={{ margin: 0 }}>
              <Link href="/admin/settings">Turn Code Mode on in Settings</Link> (admins).
            </p>
          )}
        </section>
      )}
    </article>
  );
}
