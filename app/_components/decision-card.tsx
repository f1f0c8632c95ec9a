"use client";
/**
 * Calls waiting for a person, said plainly before anyone answers: for each, the App's and tool's names
 * and description, a summary line built from the arguments, the arguments once (as a tree), the tool's
 * annotations and the program line that made the call. One card per pause: a run's waiting calls share
 * it (Allow all / Deny all, or per call); a lone call has Allow/Deny (keys A and D while the card has
 * focus; the first card takes focus when it appears).
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { DecisionView } from "@/server/services/decisions";
import { useTRPC } from "../_lib/trpc";
import { exactly } from "../_lib/visible";
import { AskReasons, type RememberChoice, RememberSelect, rememberOf } from "./grants-ui";
import { JsonTree } from "./json-tree";

const humanize = (name: string) => {
  const words = name
    .replace(/[_-]+/g, " ")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** A value as the summary shows it: invisible characters as escapes (visible.ts), cut at 48 characters. */
const show = (v: unknown) => {
  const text = exactly(typeof v === "string" ? v : JSON.stringify(v));
  return text.length > 48 ? `${text.slice(0, 47)}…` : text;
};

/**
 * "Send email to team@example.com — subject 'Q4 planning', body '…'" from the tool's name and arguments;
 * `undeclared` arguments (not in the tool's schema) are left out, as the App may ignore them.
 */
export function summaryLine(action: string, args: unknown, undeclared: readonly string[] = []): string {
  if (!args || typeof args !== "object" || Array.isArray(args))
    return args === undefined ? action : `${action} — ${show(args)}`;
  const entries = Object.entries(args as Record<string, unknown>).filter(
    ([k, v]) => v !== null && v !== undefined && typeof v !== "object" && !undeclared.includes(k),
  );
  const target = entries.find(([k]) => /^(to|recipient|recipients|email|url|path|id|name)$/i.test(k));
  // Short facts first (a subject before a body).
  const rest = entries
    .filter((e) => e !== target)
    .sort((x, y) => show(x[1]).length - show(y[1]).length)
    .slice(0, 3);
  const head = target
    ? `${action} ${/^(to|recipients?)$/i.test(target[0]) ? "to" : `${exactly(target[0])}`} ${show(target[1])}`
    : action;
  const tail = rest.map(([k, v]) => `${exactly(k)} ${typeof v === "string" ? `'${show(v)}'` : show(v)}`).join(", ");
  const nested = Object.keys(args).filter((k) => !undeclared.includes(k)).length - entries.length;
  return [head, tail].filter(Boolean).join(" — ") + (nested > 0 ? ` (+${nested} more)` : "");
}

/** The lines of the program that call this binding (1-based), when the source says. */
function callLines(code: string, binding: string): { line: number; text: string }[] {
  const needle = `apps.${binding}(`;
  return code
    .split("\n")
    .map((text, i) => ({ line: i + 1, text: text.trim() }))
    .filter((l) => l.text.includes(needle));
}

/** What one waiting call does: summary, tool, annotations, arguments and the program lines that make it. */
function CallDetails({ decision }: { decision: DecisionView }) {
  const { app, code } = decision.request;
  const tool = decision.tool;
  const action = actionOf(decision);
  const lines = callLines(code.code, app.binding);
  return (
    <>
      <section className="stack" style={{ gap: 6 }}>
        <p id={`decision-${decision.id}-summary`} data-testid="decision-summary" style={{ margin: 0, fontWeight: 600 }}>
          {summaryLine(action, app.arguments, tool?.undeclared)}
        </p>
        <p className="muted small" style={{ margin: 0 }}>
          <code>apps.{app.binding}</code>
          {tool?.description
            ? ` — ${exactly(tool.description.length > 300 ? `${tool.description.slice(0, 299)}…` : tool.description)}`
            : ""}
        </p>
        {tool && (
          <div className="row" style={{ gap: 6 }} data-testid="decision-annotations">
            {tool.annotations.readOnly ? (
              <span className="pill">Read-only</span>
            ) : (
              <span className="pill warn">Changes data</span>
            )}
            {tool.annotations.destructive && <span className="pill bad">May delete or overwrite</span>}
            {tool.annotations.openWorld && <span className="pill">Reaches outside OpenBot</span>}
          </div>
        )}
      </section>
      <AskReasons request={decision.request} />
      <section>
        <h4>Arguments</h4>
        <div data-testid="decision-arguments" className="small" style={{ fontFamily: "var(--mono)" }}>
          <JsonTree value={app.arguments} exact />
        </div>
        {tool && tool.undeclared.length > 0 && (
          <p className="small warn-text" data-testid="decision-undeclared" style={{ margin: "6px 0 0" }}>
            Not in the tool's schema: {tool.undeclared.join(", ")}. The App may ignore{" "}
            {tool.undeclared.length === 1 ? "it" : "them"}, so do not decide by{" "}
            {tool.undeclared.length === 1 ? "it" : "them"}.
          </p>
        )}
      </section>
      {lines.length > 0 && (
        <section data-testid="decision-program-line">
          <h4>{lines.length === 1 ? "Program line" : "Program lines"}</h4>
          {lines.slice(0, 3).map((l) => (
            <pre key={l.line} className="small">
              <span className="muted">{l.line}</span> {l.text}
            </pre>
          ))}
        </section>
      )}
    </>
  );
}

/** The tool's title (the App's text: invisible characters escaped), or its name made readable. */
const actionOf = (d: DecisionView) => exactly(d.tool?.title ?? humanize(d.request.app.tool));

/**
 * One card per pause: every call of one run that waits for a person (a direct call is a card of its
 * own). One call: Allow or Deny. Several: Allow all, Deny all (one batch, all or nothing), or each call
 * on its own; the program runs again once every call of the pause is decided.
 */
export function DecisionCard({ decisions, autoFocus = false }: { decisions: DecisionView[]; autoFocus?: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const ref = useRef<HTMLElement>(null);
  const options = { onSettled: () => queryClient.invalidateQueries() };
  const one = useMutation(trpc.decisions.decide.mutationOptions(options));
  const many = useMutation(trpc.decisions.decideMany.mutationOptions(options));
  const [remember, setRemember] = useState<RememberChoice>("once");
  useEffect(() => {
    if (autoFocus) ref.current?.focus();
  }, [autoFocus]);
  const first = decisions[0];
  if (!first) return null;
  const busy = one.isPending || many.isPending;
  const error = one.error ?? many.error;
  const single = decisions.length === 1;
  // "Remember" applies to a program's calls that are allowed (a direct call has no run to remember for).
  const kept = (choice: "allow" | "deny", d: DecisionView) =>
    choice === "allow" && d.runId !== null ? rememberOf(remember) : undefined;
  const answerOf = (d: DecisionView, choice: "allow" | "deny") => {
    const r = kept(choice, d);
    return { id: d.id, decision: choice, ...(r ? { remember: r } : {}) };
  };
  const decideOne = (id: string, choice: "allow" | "deny") => {
    const d = decisions.find((x) => x.id === id);
    if (!busy && d) one.mutate(answerOf(d, choice));
  };
  const decideAll = (choice: "allow" | "deny") => {
    if (!busy) many.mutate({ items: decisions.map((d) => answerOf(d, choice)) });
  };
  const { app, code } = first.request;
  const titleId = `decision-${first.id}-title`;
  const appName = first.tool?.appName ?? app.binding.split(".")[0];
  return (
    <article
      ref={ref}
      tabIndex={-1}
      className="run-card decision-card"
      data-testid="decision-card"
      aria-labelledby={titleId}
      aria-describedby={single ? `decision-${first.id}-summary` : undefined}
      style={{ borderColor: "var(--warn)" }}
      onKeyDown={(e) => {
        if (
          !single ||
          e.target instanceof HTMLInputElement ||
          e.target instanceof HTMLTextAreaElement ||
          e.metaKey ||
          e.ctrlKey ||
          e.altKey
        )
          return;
        if (e.key === "a" || e.key === "A") decideOne(first.id, "allow");
        else if (e.key === "d" || e.key === "D") decideOne(first.id, "deny");
      }}
    >
      <header>
        <span className="status Waiting">Needs your decision</span>
        <h3 id={titleId} style={{ margin: 0, fontSize: 15, flex: "1 1 14em" }}>
          {single ? (
            <>
              {actionOf(first)} <span className="muted small">· {appName}</span>
            </>
          ) : (
            `${decisions.length} calls wait for your decision`
          )}
        </h3>
        <span className="muted small">
          {single ? `call ${code.index + 1} of run ${code.run.slice(0, 12)}…` : `run ${code.run.slice(0, 12)}…`}
        </span>
      </header>
      {single ? (
        <CallDetails decision={first} />
      ) : (
        <ol className="stack" style={{ gap: 12, margin: 0, paddingLeft: 18 }}>
          {decisions.map((d) => (
            <li key={d.id} data-testid="decision-item" aria-label={`Call ${d.request.code.index + 1}: ${actionOf(d)}`}>
              <div className="stack" style={{ gap: 6 }}>
                <span className="muted small">
                  call {d.request.code.index + 1} · {actionOf(d)}
                </span>
                <CallDetails decision={d} />
                <div className="row">
                  <button type="button" disabled={busy} onClick={() => decideOne(d.id, "allow")}>
                    Allow this call
                  </button>
                  <button type="button" disabled={busy} onClick={() => decideOne(d.id, "deny")}>
                    Deny this call
                  </button>
                </div>
              </div>
            </li>
          ))}
        </ol>
      )}
      <section className="row">
        {single ? (
          <>
            <button
              className="primary"
              type="button"
              aria-keyshortcuts="A"
              disabled={busy}
              onClick={() => decideOne(first.id, "allow")}
            >
              Allow
            </button>
            <button type="button" aria-keyshortcuts="D" disabled={busy} onClick={() => decideOne(first.id, "deny")}>
              Deny
            </button>
            {first.runId !== null && (
              <RememberSelect id={`decision-${first.id}-remember`} value={remember} onChange={setRemember} program />
            )}
            <span className="muted small">Keys: A allows, D denies</span>
          </>
        ) : (
          <>
            <button className="primary" type="button" disabled={busy} onClick={() => decideAll("allow")}>
              Allow all {decisions.length}
            </button>
            <button type="button" disabled={busy} onClick={() => decideAll("deny")}>
              Deny all {decisions.length}
            </button>
            {first.runId !== null && (
              <RememberSelect id={`decision-${first.id}-remember`} value={remember} onChange={setRemember} program />
            )}
            <span className="muted small">The program runs again once every call here is decided.</span>
          </>
        )}
        {error && (
          <span role="alert" className="error-text small">
            {error.message}
          </span>
        )}
      </section>
    </article>
  );
}
