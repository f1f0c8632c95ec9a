"use client";
/**
 * One code run: its program, status, how long it took (a live timer while it runs), log lines (capped,
 * with "show all"), App calls (a row opens its arguments and result), what it handed back with text() and
 * json() (text as Markdown, JSON as a tree, in the order given) and its value, with copy buttons; the body
 * collapses to the header.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { Fragment, useEffect, useState } from "react";
import type { CodeRunCallView, CodeRunRecord } from "@/contracts/code-run";
import type { LogLine } from "@/contracts/engine";
import { useTRPC } from "../_lib/trpc";
import { CodeView } from "./code-view";
import { CopyButton } from "./copy-button";
import { JsonTree } from "./json-tree";
import { Markdown } from "./markdown";
import { appsNeedingSignIn, ConnectButton } from "./oauth-connect";

/** Past this many lines the log box is capped in height (it scrolls) until "show all". */
const LOG_PREVIEW = 12;
const ACTIVE = new Set(["Running", "Waiting", "Queued"]);

export const formatDuration = (ms: number) =>
  ms < 1_000
    ? `${Math.max(0, Math.round(ms))} ms`
    : ms < 60_000
      ? `${(ms / 1_000).toFixed(1)} s`
      : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;

/** Seconds since `from`, re-rendered every second while `active`. */
function useElapsed(from: number, active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [active]);
  return now - from;
}

const reads = (code: string) => /\bDate\b|Math\.random|performance\.now/.test(code);
const logText = (logs: LogLine[]) =>
  logs.map((l) => (l.level !== "log" ? `[${l.level}] ${l.text}` : l.text)).join("\n");

export function RunCard({ run, liveLogs }: { run: CodeRunRecord; liveLogs?: LogLine[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const cancel = useMutation(
    trpc.codeRuns.cancel.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }),
  );
  const [open, setOpen] = useState(true);
  const [allLogs, setAllLogs] = useState(false);
  const [openCalls, setOpenCalls] = useState<Set<number>>(new Set());
  const result = run.result;
  const logs = result?.logs ?? liveLogs ?? [];
  const active = ACTIVE.has(run.status);
  const elapsed = useElapsed(run.createdAt, active);
  const bodyId = `run-${run.id}-body`;
  const toggleCall = (index: number) =>
    setOpenCalls((s) => {
      const next = new Set(s);
      if (next.has(index)) next.delete(index);
      else next.add(index);
      return next;
    });
  return (
    <article className="run-card" data-testid="run-card" data-status={run.status} aria-label={`Code run ${run.id}`}>
      <header>
        <span
          className={`status ${run.status}`}
          data-testid="run-status"
          role="status"
          aria-label={`Run status: ${run.status}`}
        >
          {run.status}
        </span>
        <strong style={{ flex: "1 1 12em" }}>{run.reason || "Program"}</strong>
        <span className="muted small" data-testid="run-duration">
          {active
            ? `${run.status === "Waiting" ? "waiting" : "running"} ${formatDuration(elapsed)}`
            : `took ${formatDuration(run.updatedAt - run.createdAt)}`}
        </span>
        <span className="muted small">{new Date(run.createdAt).toLocaleTimeString()}</span>
        {(run.status === "Queued" || run.status === "Running" || run.status === "Waiting") && (
          <button type="button" onClick={() => cancel.mutate({ id: run.id })} disabled={cancel.isPending}>
            Cancel run
          </button>
        )}
        <button
          type="button"
          className="small"
          aria-expanded={open}
          aria-controls={bodyId}
          onClick={() => setOpen((o) => !o)}
        >
          {open ? "Collapse" : "Expand"}
        </button>
      </header>
      {run.status === "Queued" && (
        <p className="muted small" data-testid="run-queued" style={{ margin: 0 }}>
          Waiting for a free place on the server runner: it runs as soon as one of the running programs ends.
        </p>
      )}
      <div id={bodyId} hidden={!open}>
        <section>
          <div className="section-bar">
            <h4>Program</h4>
            <CopyButton text={run.code} label="Copy program" />
          </div>
          <CodeView code={run.code} />
          {reads(run.code) && (
            <p className="muted small" data-testid="run-replay-note" style={{ margin: "6px 0 0" }}>
              This program reads the clock or random numbers. Both are fixed for the run, so a re-run after a decision
              sees the same time and the same random values.
            </p>
          )}
        </section>
        {logs.length > 0 && (
          <section>
            <div className="section-bar">
              <h4>Log</h4>
              <CopyButton text={() => logText(logs)} label="Copy log" />
            </div>
            <ul className={`logs ${allLogs ? "" : "capped"}`} data-testid="run-logs" aria-label="Log lines">
              {logs.map((l, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: log lines only ever grow at the end, so the index is their identity
                <li key={i} className={l.level}>
                  {l.level !== "log" ? `[${l.level}] ` : ""}
                  {l.text}
                </li>
              ))}
            </ul>
            {logs.length > LOG_PREVIEW && (
              <button type="button" className="small" style={{ marginTop: 6 }} onClick={() => setAllLogs((a) => !a)}>
                {allLogs ? "Show fewer lines" : `Show all ${logs.length} lines`}
              </button>
            )}
          </section>
        )}
        {run.calls.length > 0 && (
          <section>
            <h4>Calls</h4>
            <table className="calls" data-testid="run-calls">
              <thead>
                <tr>
                  <th>#</th>
                  <th>Binding</th>
                  <th>Status</th>
                  <th>Decided by</th>
                  <th>Time</th>
                </tr>
              </thead>
              <tbody>
                {run.calls.map((c) => (
                  <Fragment key={c.index}>
                    <tr>
                      <td>
                        <button
                          type="button"
                          className="link-button"
                          aria-expanded={openCalls.has(c.index)}
                          aria-label={`Call ${c.index + 1}: arguments and result`}
                          onClick={() => toggleCall(c.index)}
                        >
                          {openCalls.has(c.index) ? "▾" : "▸"} {c.index + 1}
                        </button>
                      </td>
                      <td>
                        <code>apps.{c.binding}</code>
                      </td>
                      <td>
                        {c.rejection ? (
                          <span className="error-text">{c.rejection.name}</span>
                        ) : (
                          (c.app?.status ?? callState(c, run.status))
                        )}
                        {c.app?.progress && (
                          <span className="muted" data-testid="call-progress">
                            {" "}
                            {progressText(c.app.progress)}
                          </span>
                        )}
                        {c.app?.task && (
                          <span className="muted" data-testid="call-task">
                            {" "}
                            {taskText(c.app.task)}
                          </span>
                        )}
                      </td>
                      <td className="muted small" data-testid="call-decision">
                        {decidedBy(c)}
                      </td>
                      <td className="muted">
                        {c.app?.finishedAt ? formatDuration(c.app.finishedAt - c.app.startedAt) : ""}
                      </td>
                    </tr>
                    {openCalls.has(c.index) && (
                      <tr className="call-detail" data-testid="call-detail">
                        <td colSpan={5}>
                          <div className="grid-2 small" style={{ fontFamily: "var(--mono)" }}>
                            <div>
                              <h5>Arguments</h5>
                              <JsonTree value={c.arguments ?? null} />
                            </div>
                            <div>
                              <h5>Result</h5>
                              {c.rejection ? (
                                <span className="error-text">
                                  {c.rejection.name}: {c.rejection.message}
                                </span>
                              ) : c.app ? (
                                <JsonTree value={c.app.result ?? null} />
                              ) : (
                                <span className="muted">not called yet</span>
                              )}
                            </div>
                          </div>
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </section>
        )}
        {result?._tag === "Completed" && result.output.length > 0 && (
          <section>
            <div className="section-bar">
              <h4>Output</h4>
              <CopyButton
                text={() =>
                  result.output
                    .map((item) => (item.type === "text" ? item.text : JSON.stringify(item.value ?? null, null, 2)))
                    .join("\n\n")
                }
                label="Copy output"
              />
            </div>
            <div data-testid="run-output" className="small">
              {result.output.map((item, i) =>
                item.type === "text" ? (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the items are a fixed list in the program's order
                  <div key={i} data-output="text">
                    <Markdown text={item.text} />
                  </div>
                ) : (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the items are a fixed list in the program's order
                  <div key={i} data-output="json" style={{ fontFamily: "var(--mono)" }}>
                    <JsonTree value={item.value ?? null} />
                  </div>
                ),
              )}
            </div>
          </section>
        )}
        {result?._tag === "Completed" && (
          <section>
            <div className="section-bar">
              <h4>Value</h4>
              <CopyButton text={() => JSON.stringify(result.value ?? null, null, 2)} label="Copy value" />
            </div>
            <div data-testid="run-value" className="small" style={{ fontFamily: "var(--mono)" }}>
              <JsonTree value={result.value} />
            </div>
          </section>
        )}
        {result?._tag === "Failed" && (
          <section>
            <h4>Failure</h4>
            <p className="error-text" data-testid="run-failure" style={{ margin: 0 }}>
              <FailureText reason={result.reason} message={result.message} />
            </p>
            <p className="muted small" style={{ margin: 0 }}>
              Error id {result.errorId}
            </p>
            {appsNeedingSignIn(run).map((app) => (
              <p key={app.connectionId} className="small" style={{ margin: 0 }} data-testid="connect-app">
                {app.connectionName} needs your sign-in:{" "}
                <ConnectButton connectionId={app.connectionId} who="me" label={`Connect ${app.connectionName}`} />
              </p>
            ))}
            {result.reason === "Unavailable" && /Code Mode is off/.test(result.message) && (
              <p className="small" style={{ margin: 0 }}>
                <Link href="/admin/settings">Turn Code Mode on in Settings</Link> (admins).
              </p>
            )}
          </section>
        )}
      </div>
    </article>
  );
}

/**
 * Who or what let the call go: "Ada Admin at 14:02:11", "a remembered grant at 14:02:11", "the tool's policy"
 * (a call that started without anyone deciding), or "" (not decided yet, or refused before it started).
 */
function decidedBy(c: CodeRunCallView): string {
  const decision = c.decision;
  if (!decision) return c.app && !c.rejection && !c.binding.startsWith("$") ? "the tool's policy" : "";
  const at = new Date(decision.at).toLocaleTimeString();
  return "grant" in decision.by ? `a remembered grant at ${at}` : `${decision.by.name} at ${at}`;
}

/** A call with no App operation and no refusal: waiting for a person, answered from the run's catalog, or not begun. */
function callState(c: CodeRunCallView, runStatus: CodeRunRecord["status"]): string {
  if (c.binding.startsWith("$")) return "answered from the catalog";
  return runStatus === "Waiting" ? "waiting for a decision" : "—";
}

/** An App's task as a short line: `task working · Gathering data` (the message is the App's text, shown as text). */
function taskText(t: { status: string; statusMessage: string | null }): string {
  const status = `task ${t.status.replace("_", " ")}`;
  return t.statusMessage ? `${status} · ${t.statusMessage.slice(0, 120)}` : status;
}

/** An App's progress report as a short line: `3/4 · step 3` (the message is the App's text, shown as text). */
function progressText(p: { progress: number; total?: number; message?: string }): string {
  const amount = p.total ? `${p.progress}/${p.total}` : String(p.progress);
  return p.message ? `${amount} · ${p.message.slice(0, 120)}` : amount;
}

/**
 * "Timeout: the program ran longer than 10000 ms", and for a program's own error its description alone
 * ("TypeError: x is not a function", not "Error: TypeError: …"), the name in bold.
 */
function FailureText({ reason, message }: { reason: string; message: string }) {
  const text = reason === "Error" && /^[A-Za-z]*Error\b/.test(message) ? message : `${reason}: ${message}`;
  const colon = text.indexOf(": ");
  if (colon < 0) return <strong>{text}</strong>;
  return (
    <>
      <strong>{text.slice(0, colon)}</strong>
      {text.slice(colon)}
    </>
  );
}
