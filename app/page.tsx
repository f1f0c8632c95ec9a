"use client";
import { AppShell } from "./_components/app-shell";
import { ChatWorkspace } from "./_components/chat-workspace";

export default function Home() {
  return <AppShell>{(me) => <ChatWorkspace isAdmin={me.permissions.includes("platform.admin")} />}</AppShell>;
}
