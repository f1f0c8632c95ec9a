"use client";
/**
 * Remembered grants and Unknown writes in the page: the "Remember" choice a decision card offers, why a
 * call was asked about (untrusted content read before, and where its arguments came from), the chat's
 * list of its grants with Revoke, the Admin → Grants table, and the card for a call whose outcome is
 * Unknown ("this may or may not have happened": Mark as done, or Send again).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { GrantView } from "@/contracts/grants";
import type { DecisionView } from "@/server/services/decisions";
import { useTRPC } from "../_lib/trpc";

export type RememberChoice = "once" | "run" | "chat";

export function rememberOf(choice: RememberChoice) {
  return choice === "once" ? undefined : { scope: choice, match: "binding" as const };
}

/** The "Remember" select of a decision card (a program's call: run or chat; a direct call: chat). */
export function RememberSelect({
  id,
  value,
  onChange,
  program,
}: {
  id: string;
  value: RememberChoice;
  onChange: (v: RememberChoice) => void;
  program: boolean;
}) {
  return (
    <label className="small" htmlFor={id}>
      Remember{" "}
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as RememberChoice)}>
        <option value="once">Just this once</option>
        {program && <option value="run">Allow for this run</option>}
        <option value="chat">Allow for this chat</option>
      </select>
    </label>
  );
}

/** Why the call is asked about beyond its policy, and which earlier call each argument string came from. */
export function AskReasons({ request }: { request: DecisionView["request"] }) {
  const context = request.context;
  if (!context || (!context.taint && context.provenance.length === 0)) return null;
  return (
    <section data-testid="decision-why" className="stack" style={{ gap: 4 }}>
      {context.taint && (
        <p className="small" style={{ margin: 0, fontWeight: 600 }} data-testid="decision-taint">
          Asked because {context.taint}.
        </p>
      )}
      {context.provenance.length > 0 && (
        <ul className="small" style={{ margin: 0 }} data-testid="decision-provenance">
          {context.provenance.map((p) => (
            <li key={p.path}>
              <code>{p.path || "(the argument)"}</code> came from{" "}
              {p.from.map((f) => `call ${f.index + 1} (apps.${f.binding})`).join(", ")}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const scopeLabel = (g: GrantView) =>
  g.scope === "run" ? `this run (${g.runId?.slice(0, 12)}…)` : g.scope === "chat" ? "this chat" : "everyone";

function GrantRow({ grant, showChat }: { grant: GrantView; showChat?: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const revoke = useMutation(trpc.grants.revoke.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }));
  return (
    <tr data-testid="grant-row">
      <td>
        <code>apps.{grant.binding}</code>
        {grant.match === "arguments" && <span className="muted small"> (these arguments only)</span>}
      </td>
      <td>{scopeLabel(grant)}</td>
      {showChat && (
        <td className="small">
          {grant.chatId ? <Link href={`/chats/${grant.chatId}`}>{grant.chatTitle ?? "a deleted chat"}</Link> : "—"}
        </td>
      )}
      <td className="small">
        {grant.createdBy.name}, {new Date(grant.createdAt).toLocaleString()}
      </td>
      <td className="small">{grant.uses}</td>
      <td className="small">
        {grant.revokedAt
          ? `Revoked by ${grant.revokedBy?.name ?? "?"}`
          : grant.expiresAt && !grant.active
            ? "Expired"
            : grant.expiresAt
              ? `Until ${new Date(grant.expiresAt).toLocaleString()}`
              : "Active"}
      </td>
      <td>
        {grant.active && (
          <button type="button" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: grant.id })}>
            Revoke
          </button>
        )}
        {revoke.error && (
          <span role="alert" className="error-text small">
            {revoke.error.message}
          </span>
        )}
      </td>
    </tr>
  );
}

function GrantTable({ grants, showChat }: { grants: GrantView[]; showChat?: boolean }) {
  return (
    <table className="small" style={{ width: "100%" }}>
      <thead>
        <tr>
          <th align="left">Call</th>
          <th align="left">For</th>
          {showChat && <th align="left">Chat</th>}
          <th align="left">Made by</th>
          <th align="left">Uses</th>
          <th align="left">State</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {grants.map((g) => (
          <GrantRow key={g.id} grant={g} showChat={showChat} />
        ))}
      </tbody>
    </table>
  );
}

/** The chat's remembered grants (active ones), with Revoke; nothing when there are none. */
export function ChatGrants({ chatId }: { chatId: string }) {
  const trpc = useTRPC();
  const grants = useQuery(trpc.grants.list.queryOptions({ chatId }));
  if (!grants.data?.length) return null;
  return (
    <section className="panel stack" aria-label="Remembered grants" data-testid="chat-grants">
      <h3 style={{ margin: 0, fontSize: 14 }}>Remembered in this chat</h3>
      <GrantTable grants={grants.data} />
    </section>
  );
}

/** Admin → Grants: every grant, revoked and expired ones too, newest first. */
export function GrantsAdmin() {
  const trpc = useTRPC();
  const grants = useQuery(trpc.grants.list.queryOptions({ all: true }));
  if (grants.error)
    return (
      <p role="alert" className="error-text">
        {grants.error.message}
      </p>
    );
  if (!grants.data) return <p className="muted">Loading…</p>;
  if (grants.data.length === 0) return <p className="muted">No decision has been remembered yet.</p>;
  return <GrantTable grants={grants.data} showChat />;
}

/** The calls of a chat's runs whose outcome is Unknown and that wait for a person. */
export function unknownCalls(runs: CodeRunRecord[]) {
  return runs.flatMap((run) =>
    run.status === "Waiting"
      ? run.calls.filter((c) => c.unknown?.state === "pending").map((call) => ({ run, call }))
      : [],
  );
}

export function UnknownCard({ run, call }: ReturnType<typeof unknownCalls>[number]) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [result, setResult] = useState("");
  const reconcile = useMutation(
    trpc.codeRuns.reconcile.mutationOptions({ onSettled: () => queryClient.invalidateQueries() }),
  );
  const id = `unknown-${run.id}-${call.index}`;
  return (
    <article
      className="run-card"
      data-testid="unknown-card"
      aria-labelledby={`${id}-title`}
      style={{ borderColor: "var(--warn)" }}
    >
      <header>
        <span className="status Waiting">Needs your check</span>
        <h3 id={`${id}-title`} style={{ margin: 0, fontSize: 15, flex: "1 1 14em" }}>
          apps.{call.binding} may or may not have happened
        </h3>
        <span className="muted small">
          call {call.index + 1} of run {run.id.slice(0, 12)}…
        </span>
      </header>
      <section className="stack" style={{ gap: 6 }}>
        <p className="small" style={{ margin: 0 }}>
          It was sent to {call.source.connectionName}, then OpenBot stopped before the answer was stored. Check in the
          App whether it happened: mark it as done (nothing is sent; the program gets the result you type, if any), or
          send it again.
        </p>
        <label className="small" htmlFor={`${id}-result`}>
          Result (optional, text or JSON)
        </label>
        <textarea id={`${id}-result`} rows={2} value={result} onChange={(e) => setResult(e.target.value)} />
      </section>
      <section className="row">
        <button
          className="primary"
          type="button"
          disabled={reconcile.isPending}
          onClick={() => reconcile.mutate({ runId: run.id, index: call.index, action: "done", result })}
        >
          Mark as done
        </button>
        <button
          type="button"
          disabled={reconcile.isPending}
          onClick={() => reconcile.mutate({ runId: run.id, index: call.index, action: "send" })}
        >
          Send again
        </button>
        {reconcile.error && (
          <span role="alert" className="error-text small">
            {reconcile.error.message}
          </span>
        )}
      </section>
    </article>
  );
}
