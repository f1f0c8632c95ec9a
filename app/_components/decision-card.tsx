"use client";
/** A call waiting for a person: the binding and its full arguments are shown before anyone answers. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { DecisionView } from "@/server/services/decisions";
import { useTRPC } from "../_lib/trpc";
import { JsonTree } from "./json-tree";

export function DecisionCard({ decision }: { decision: DecisionView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const answer = useMutation(
    trpc.decisions.decide.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(),
    }),
  );
  const { app, code } = decision.request;
  return (
    <article className="run-card" data-testid="decision-card" aria-label={`Decision for apps.${app.binding}`} style={{ borderColor: "var(--warn)" }}>
      <header>
        <span className="status Waiting">Needs your decision</span>
        <strong style={{ flex: 1 }}>
          <code>apps.{app.binding}</code>
        </strong>
        <span className="muted small">call {code.index} of run {code.run.slice(0, 12)}…</span>
      </header>
      <section>
        <h4>Arguments</h4>
        <div data-testid="decision-arguments" className="small" style={{ fontFamily: "var(--mono)" }}>
          <JsonTree value={app.arguments} />
        </div>
        <pre className="small" style={{ marginTop: 8 }} aria-label="Arguments as JSON">{JSON.stringify(app.arguments, null, 2)}</pre>
      </section>
      <section className="row">
        <button className="primary" type="button" disabled={answer.isPending} onClick={() => answer.mutate({ id: decision.id, decision: "allow" })}>
          Allow
        </button>
        <button type="button" disabled={answer.isPending} onClick={() => answer.mutate({ id: decision.id, decision: "deny" })}>
          Deny
        </button>
        {answer.error && <span role="alert" className="error-text small">{answer.error.message}</span>}
      </section>
    </article>
  );
}
