"use client";
/**
 * Signing in to an OAuth App: asks the server to start the sign-in (the shared one of a connection, or
 * the person's own for a per-person App) and sends the browser to the authorization server, which sends
 * it back to /v1/oauth/callback. No token ever reaches the page.
 */
import { useState } from "react";
import type { CodeRunRecord } from "@/contracts/code-run";

export function ConnectButton({
  connectionId,
  who,
  label,
}: {
  connectionId: string;
  who: "shared" | "me";
  label: string;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <span className="row" style={{ gap: 8 }}>
      <button
        type="button"
        className="primary"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            const response = await fetch(`/v1/connections/${encodeURIComponent(connectionId)}/oauth`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              // Back to this chat after the sign-in (the server accepts only "/" or a chat path).
              body: JSON.stringify({
                for: who,
                ...(/^\/chats\/[A-Za-z0-9_-]+$/.test(window.location.pathname)
                  ? { returnTo: window.location.pathname }
                  : {}),
              }),
            });
            const body = (await response.json()) as {
              authorizationUrl?: string;
              authorized?: boolean;
              error?: { message: string };
            };
            if (!response.ok) throw new Error(body.error?.message ?? `The server answered ${response.status}.`);
            if (body.authorizationUrl) window.location.assign(body.authorizationUrl);
            else window.location.reload();
          } catch (e) {
            setError(e instanceof Error ? e.message : String(e));
            setBusy(false);
          }
        }}
      >
        {label}
      </button>
      {error && (
        <span role="alert" className="error-text small">
          {error}
        </span>
      )}
    </span>
  );
}

/** The Apps a run's calls could not use because the person is not signed in to them. */
export function appsNeedingSignIn(run: CodeRunRecord): { connectionId: string; connectionName: string }[] {
  const seen = new Map<string, string>();
  for (const call of run.calls) {
    const result = call.app?.result as { error?: { details?: { reason?: unknown } } } | undefined;
    if (call.app?.status === "Failed" && result?.error?.details?.reason === "auth_required")
      seen.set(call.source.connectionId, call.source.connectionName);
  }
  return [...seen].map(([connectionId, connectionName]) => ({ connectionId, connectionName }));
}
