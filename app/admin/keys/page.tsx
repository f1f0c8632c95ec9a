"use client";
import { AppShell } from "../../_components/app-shell";
import { KeysAdmin } from "../../_components/keys-admin";

export default function KeysPage() {
  return (
    <AppShell requireAdmin>
      {() => (
        <div className="stack" style={{ maxWidth: 820 }}>
          <h1 style={{ margin: 0 }}>API keys</h1>
          <KeysAdmin />
        </div>
      )}
    </AppShell>
  );
}
