"use client";
import { AppShell } from "../../_components/app-shell";
import { VaultAdmin } from "../../_components/vault-admin";

export default function VaultPage() {
  return (
    <AppShell requireAdmin>
      {() => (
        <div className="stack" style={{ maxWidth: 980 }}>
          <h1 style={{ margin: 0 }}>Vault</h1>
          <VaultAdmin />
        </div>
      )}
    </AppShell>
  );
}
