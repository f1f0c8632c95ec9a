"use client";
import { use } from "react";
import { AppShell } from "../../_components/app-shell";
import { ChatWorkspace } from "../../_components/chat-workspace";

export default function ChatPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = use(params);
  return (
    <AppShell>{(me) => <ChatWorkspace chatId={id} isAdmin={me.permissions.includes("platform.admin")} />}</AppShell>
  );
}
