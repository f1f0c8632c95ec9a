"use client";
/** The built-in Email app's outbox: every mail a program or the model sent (each read is an App call of list-sent). */
import { useQuery } from "@tanstack/react-query";
import { AppShell } from "../_components/app-shell";
import { useTRPC } from "../_lib/trpc";

function Outbox() {
  const trpc = useTRPC();
  const outbox = useQuery({ ...trpc.connections.emailOutbox.queryOptions(), refetchInterval: 30_000 });
  if (outbox.error)
    return (
      <p role="alert" className="error-text">
        {outbox.error.message}
      </p>
    );
  if (!outbox.data) return <p className="muted">Loading…</p>;
  if (!outbox.data.available) return <p className="muted">The Email app is not connected.</p>;
  return (
    <div className="stack">
      {outbox.data.emails.length === 0 && (
        <p className="muted" data-testid="outbox-empty">
          No mail sent yet.
        </p>
      )}
      {outbox.data.emails.map((m) => (
        <article key={m.id} className="panel stack" data-testid="sent-mail">
          <div className="row" style={{ justifyContent: "space-between" }}>
            <strong>{m.subject}</strong>
            <span className="muted small">{new Date(m.sentAt).toLocaleString()}</span>
          </div>
          <span className="small muted">To {m.to}</span>
          <p style={{ margin: 0, whiteSpace: "pre-wrap" }}>{m.body}</p>
        </article>
      ))}
    </div>
  );
}

export default function OutboxPage() {
  return (
    <AppShell>
      {() => (
        <div className="stack" style={{ maxWidth: 820 }}>
          <h1 style={{ margin: 0 }}>Sent mail</h1>
          <Outbox />
        </div>
      )}
    </AppShell>
  );
}
