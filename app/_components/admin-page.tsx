"use client";
/** The frame of an admin page: the app shell for admins only, a title, and the page's content. */
import type { ReactNode } from "react";
import { AppShell } from "./app-shell";

export function AdminPage({ title, maxWidth, children }: { title: string; maxWidth?: number; children: ReactNode }) {
  return (
    <AppShell requireAdmin>
      {() => (
        <div className="stack" style={maxWidth ? { maxWidth } : undefined}>
          <h1 style={{ margin: 0 }}>{title}</h1>
          {children}
        </div>
      )}
    </AppShell>
  );
}
