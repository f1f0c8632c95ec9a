"use client";
import { AppShell } from "../../_components/app-shell";
import { AppsAdmin } from "../../_components/apps-admin";

export default function AppsPage() {
  return (
    <AppShell requireAdmin>
      {() => (
        <div className="stack">
          <h1 style={{ margin: 0 }}>Apps</h1>
          <AppsAdmin />
        </div>
      )}
    </AppShell>
  );
}
