"use client";
import { AppShell } from "../../_components/app-shell";
import { ModelForm } from "../../_components/model-form";

export default function ModelPage() {
  return (
    <AppShell requireAdmin>
      {() => (
        <div className="stack" style={{ maxWidth: 820 }}>
          <h1 style={{ margin: 0 }}>Model</h1>
          <ModelForm />
        </div>
      )}
    </AppShell>
  );
}
