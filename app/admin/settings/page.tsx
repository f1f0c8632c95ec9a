"use client";
import { AppShell } from "../../_components/app-shell";
import { SettingsForm } from "../../_components/settings-form";

export default function SettingsPage() {
  return (
    <AppShell requireAdmin>
      {() => (
        <div className="stack" style={{ maxWidth: 820 }}>
          <h1 style={{ margin: 0 }}>Settings</h1>
          <SettingsForm />
        </div>
      )}
    </AppShell>
  );
}
