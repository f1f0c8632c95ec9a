"use client";
/** The frame of every page: top bar with navigation, theme switch and sign-out; a sign-in form when signed out. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";
import { clearDrafts } from "../_lib/drafts";
import { useTRPC } from "../_lib/trpc";
import { SignInForm } from "./sign-in-form";

type Me = { userId: string; name: string; role: "admin" | "member"; permissions: string[] };

export function AppShell({
  children,
  requireAdmin = false,
}: {
  children: (me: Me) => ReactNode;
  requireAdmin?: boolean;
}) {
  const trpc = useTRPC();
  const me = useQuery(trpc.auth.me.queryOptions());
  const queryClient = useQueryClient();
  const pathname = usePathname();
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({
      onSuccess: async () => {
        await clearDrafts();
        await queryClient.resetQueries();
      },
    }),
  );
  if (me.isPending) return <div className="main muted">Loading…</div>;
  if (!me.data) return <SignInForm />;
  const main = [
    { href: "/", label: "Chats", active: pathname === "/" || pathname.startsWith("/chats") },
    { href: "/outbox", label: "Sent mail", active: pathname.startsWith("/outbox") },
  ];
  // Admin pages follow what the signed-in key may do (platform.admin), not the user's role.
  const isAdmin = me.data.permissions.includes("platform.admin");
  const admin = isAdmin
    ? [
        { href: "/admin/settings", label: "Settings" },
        { href: "/admin/apps", label: "Apps" },
        { href: "/admin/model", label: "Model" },
        { href: "/admin/keys", label: "People" },
        { href: "/admin/vault", label: "Vault" },
        { href: "/admin/grants", label: "Grants" },
      ].map((a) => ({ ...a, active: pathname.startsWith(a.href) }))
    : [];
  return (
    <div className="shell">
      <header className="topbar">
        <Link href="/" className="brand">
          OpenBot
        </Link>
        <nav aria-label="Main">
          {main.map((n) => (
            <Link key={n.href} href={n.href} aria-current={n.active ? "page" : undefined}>
              {n.label}
            </Link>
          ))}
          {admin.length > 0 && (
            // biome-ignore lint/a11y/useSemanticElements: a group of navigation links, not form controls (no fieldset)
            <span className="nav-group" role="group" aria-label="Admin">
              <span className="muted small">Admin</span>
              {admin.map((n) => (
                <Link
                  key={n.href}
                  href={n.href}
                  aria-label={`Admin · ${n.label}`}
                  aria-current={n.active ? "page" : undefined}
                >
                  {n.label}
                </Link>
              ))}
            </span>
          )}
        </nav>
        <ThemeSwitch />
        <span className="muted small" data-testid="signed-in-as">
          {me.data.name}
        </span>
        <button type="button" onClick={() => signOut.mutate()}>
          Sign out
        </button>
      </header>
      <main className="main">
        {requireAdmin && !isAdmin ? (
          <p className="error-text">
            {me.data.role === "admin"
              ? "This page needs the permission platform.admin, which the key you signed in with does not hold: sign in with an admin key that holds it."
              : "This page is for admins."}
          </p>
        ) : (
          children(me.data)
        )}
      </main>
    </div>
  );
}

function ThemeSwitch() {
  const [theme, setTheme] = useState<"system" | "light" | "dark">("system");
  useEffect(() => {
    const saved = localStorage.getItem("openbot-theme");
    if (saved === "light" || saved === "dark") setTheme(saved);
  }, []);
  useEffect(() => {
    if (theme === "system") {
      delete document.documentElement.dataset.theme;
      localStorage.removeItem("openbot-theme");
    } else {
      document.documentElement.dataset.theme = theme;
      localStorage.setItem("openbot-theme", theme);
    }
  }, [theme]);
  return (
    <label className="row small muted">
      <span className="theme-label">Theme</span>
      <select
        value={theme}
        onChange={(e) => setTheme(e.target.value as typeof theme)}
        style={{ width: "auto" }}
        aria-label="Theme"
      >
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}
