"use client";
/**
 * The chat page: the list of chats, and the open chat with its code runs and a composer. No model is
 * configured yet, so the chat is in manual mode: the person writes a program and runs it in the page's
 * Web Worker through the same path a model's `openbot_run_code` call takes.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { CHAT_TITLE_MAX } from "@/contracts/chats";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { LogLine } from "@/contracts/engine";
import { CALENDAR_PROGRAM as EXAMPLE } from "@/contracts/example-programs.mjs";
import type { DecisionView } from "@/server/services/decisions";
import { loadDraft, saveDraft } from "../_lib/drafts";
import { runInBrowser } from "../_lib/run-in-browser";
import { useTRPC, useTRPCClient } from "../_lib/trpc";
import { BindingsPanel } from "./bindings-panel";
import { ChatThread } from "./chat-thread";
import { DecisionCard } from "./decision-card";
import { ErrorText, Field } from "./field";
import { ChatGrants, UnknownCard, unknownCalls } from "./grants-ui";
import { InputForm } from "./input-form";
import { RunCard } from "./run-card";

export function ChatWorkspace({ chatId, isAdmin = false }: { chatId?: string; isAdmin?: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [query, setQuery] = useState("");
  // On a phone the list is a drawer: closed while a chat is open, so the conversation comes first.
  const [drawerOpen, setDrawerOpen] = useState(!chatId);
  const chats = useQuery({
    ...trpc.chats.list.queryOptions(query.trim() ? { query: query.trim() } : undefined),
    placeholderData: (prev) => prev,
  });
  const create = useMutation(
    trpc.chats.create.mutationOptions({
      onSuccess: async (chat) => {
        await queryClient.invalidateQueries({ queryKey: trpc.chats.list.queryKey() });
        setDrawerOpen(false);
        router.push(`/chats/${chat.id}`);
      },
    }),
  );
  const groups = groupByDate(chats.data ?? []);
  return (
    <div className="chat-layout">
      <button
        type="button"
        className="drawer-toggle"
        aria-expanded={drawerOpen}
        aria-controls="chat-list-panel"
        onClick={() => setDrawerOpen((o) => !o)}
      >
        {drawerOpen ? "Hide chats" : "Chats"}
      </button>
      <aside id="chat-list-panel" className="panel stack chat-aside" data-open={drawerOpen} aria-label="Chats">
        <button className="primary" type="button" onClick={() => create.mutate({})} disabled={create.isPending}>
          New chat
        </button>
        <ErrorText error={create.error} className="small" />
        <input
          type="search"
          aria-label="Search chats"
          placeholder="Search chats"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        {groups.map((g) => (
          <div key={g.label} className="stack" style={{ gap: 4 }}>
            <h2 className="chat-group">{g.label}</h2>
            <ul className="chat-list">
              {g.chats.map((c) => (
                <li key={c.id}>
                  <Link
                    href={`/chats/${c.id}`}
                    aria-current={c.id === chatId ? "page" : undefined}
                    onClick={() => setDrawerOpen(false)}
                  >
                    {c.pinned && (
                      <span role="img" aria-label="Pinned">
                        📌{" "}
                      </span>
                    )}
                    {c.title}
                  </Link>
                </li>
              ))}
            </ul>
          </div>
        ))}
        {chats.data?.length === 0 && (
          <p className="muted small">{query.trim() ? "No chat matches." : "No chats yet."}</p>
        )}
      </aside>
      {chatId ? <ChatView chatId={chatId} isAdmin={isAdmin} /> : <Home isAdmin={isAdmin} />}
    </div>
  );
}

/** The home page: for admins a first-run checklist (Code Mode, a model, Apps), then a pointer to the chats. */
function Home({ isAdmin }: { isAdmin: boolean }) {
  const trpc = useTRPC();
  const mode = useQuery(trpc.chats.mode.queryOptions());
  const apps = useQuery({ ...trpc.connections.list.queryOptions(), enabled: isAdmin });
  const enabledApps = apps.data?.filter((a) => a.enabled).length ?? 0;
  const steps = [
    {
      done: !!mode.data?.codeModeEnabled,
      text: "Turn Code Mode on, so programs can call your Apps",
      href: "/admin/settings",
      link: "Open Settings",
    },
    {
      done: !!mode.data?.modelConfigured,
      text: "Set a model (an OpenAI-compatible endpoint such as Ollama, OpenAI or Anthropic); without one you write programs yourself",
      href: "/admin/model",
      link: "Open Model",
    },
    {
      done: enabledApps > 0,
      text:
        enabledApps > 0
          ? `Review your Apps and their policies (${enabledApps} connected)`
          : "Connect an App (an MCP server)",
      href: "/admin/apps",
      link: "Open Apps",
    },
  ];
  return (
    <div className="stack">
      {isAdmin && mode.data && (
        <section className="panel stack" aria-labelledby="first-run-title" data-testid="first-run">
          <h1 id="first-run-title" style={{ margin: 0, fontSize: 20 }}>
            {steps.every((s) => s.done) ? "OpenBot is ready" : "Get OpenBot ready"}
          </h1>
          <ol className="checklist">
            {steps.map((s) => (
              <li key={s.href} data-done={s.done}>
                <span aria-hidden="true" className="check-mark">
                  {s.done ? "✓" : "○"}
                </span>
                <span className="sr-only">{s.done ? "Done: " : "To do: "}</span>
                <span style={{ flex: 1 }}>{s.text}</span>
                <Link href={s.href}>{s.link}</Link>
              </li>
            ))}
          </ol>
        </section>
      )}
      <div className="panel muted">
        {!isAdmin && <h1 style={{ margin: "0 0 6px", fontSize: 20, color: "var(--text)" }}>Chats</h1>}
        Pick a chat or start a new one.
      </div>
    </div>
  );
}

type ChatSummary = { id: string; title: string; pinned: boolean; updatedAt: number };

/** Pinned first, then Today, Yesterday, Previous 7 days, Previous 30 days, Older (by last activity). */
function groupByDate(chats: ChatSummary[]): { label: string; chats: ChatSummary[] }[] {
  const day = new Date();
  day.setHours(0, 0, 0, 0);
  const today = day.getTime();
  const dayMs = 86_400_000;
  const label = (c: ChatSummary) =>
    c.pinned
      ? "Pinned"
      : c.updatedAt >= today
        ? "Today"
        : c.updatedAt >= today - dayMs
          ? "Yesterday"
          : c.updatedAt >= today - 7 * dayMs
            ? "Previous 7 days"
            : c.updatedAt >= today - 30 * dayMs
              ? "Previous 30 days"
              : "Older";
  const groups: { label: string; chats: ChatSummary[] }[] = [];
  for (const c of chats) {
    const l = label(c);
    const g = groups.find((x) => x.label === l);
    if (g) g.chats.push(c);
    else groups.push({ label: l, chats: [c] });
  }
  return groups;
}

/** The open chat's title with Rename, Pin and Delete (owner or admin; the server checks). */
function ChatHeader({ chatId, title, pinned }: { chatId: string; title: string; pinned: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: trpc.chats.list.queryKey() });
    await queryClient.invalidateQueries({ queryKey: trpc.chats.byId.queryKey({ id: chatId }) });
  };
  const update = useMutation(
    trpc.chats.update.mutationOptions({
      onSuccess: async () => {
        setEditing(null);
        await refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.chats.remove.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.chats.list.queryKey() });
        router.push("/");
      },
    }),
  );
  return (
    <div className="stack" style={{ gap: 6 }}>
      <div className="row chat-header">
        {editing === null ? (
          <h1 style={{ margin: 0, fontSize: 22, flex: "1 1 12em", minWidth: 0, overflowWrap: "anywhere" }}>{title}</h1>
        ) : (
          <form
            className="row"
            style={{ flex: "1 1 12em" }}
            onSubmit={(e) => {
              e.preventDefault();
              update.mutate({ id: chatId, title: editing });
            }}
          >
            <input
              aria-label="Chat title"
              value={editing}
              onChange={(e) => setEditing(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Escape") setEditing(null);
              }}
              maxLength={CHAT_TITLE_MAX}
              // biome-ignore lint/a11y/noAutofocus: the field replaces the Rename button the person just pressed
              autoFocus
              style={{ flex: 1, width: "auto" }}
            />
            <button className="primary" type="submit" disabled={update.isPending}>
              Save title
            </button>
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </form>
        )}
        <div className="row" style={{ gap: 6 }}>
          {editing === null && (
            <button type="button" onClick={() => setEditing(title)}>
              Rename
            </button>
          )}
          <button type="button" aria-pressed={pinned} onClick={() => update.mutate({ id: chatId, pinned: !pinned })}>
            {pinned ? "Unpin" : "Pin"}
          </button>
          <button type="button" onClick={() => setConfirming(true)}>
            Delete
          </button>
          <Link href={`/chats/${chatId}/runs`} className="small">
            All code runs
          </Link>
        </div>
      </div>
      {confirming && (
        <div className="banner row" role="alertdialog" aria-label="Delete this chat?">
          <span>Delete this chat with its messages, code runs and decisions? This cannot be undone.</span>
          <button
            type="button"
            className="danger"
            onClick={() => remove.mutate({ id: chatId })}
            disabled={remove.isPending}
          >
            Delete chat
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </div>
      )}
      <ErrorText error={update.error ?? remove.error} className="small" />
    </div>
  );
}

/** Pending decisions as cards: one per run (its pause), and one per direct call; in the order they were asked. */
function pauses(decisions: DecisionView[]): DecisionView[][] {
  const groups = new Map<string, DecisionView[]>();
  for (const d of decisions) {
    const key = d.runId ?? d.id;
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.request.code.index - b.request.code.index));
}

function ChatView({ chatId, isAdmin }: { chatId: string; isAdmin: boolean }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const chat = useQuery(trpc.chats.byId.queryOptions({ id: chatId }));
  const runs = useQuery(trpc.codeRuns.listByChat.queryOptions({ chatId }));
  const decisions = useQuery(trpc.decisions.list.queryOptions({ chatId, status: "pending" }));
  const mode = useQuery(trpc.chats.mode.queryOptions());
  const inputs = useQuery(trpc.appOperations.pendingInputs.queryOptions({ chatId }));
  const [showComposer, setShowComposer] = useState(false);
  const [serverLogs, setServerLogs] = useState<Record<string, LogLine[]>>({});
  useSubscription(
    trpc.codeRuns.onLog.subscriptionOptions(
      { chatId },
      {
        onData: ({ runId, line }) =>
          setServerLogs((all) => ({ ...all, [runId]: [...(all[runId] ?? []), line as LogLine] })),
      },
    ),
  );
  useSubscription(
    trpc.codeRuns.onChange.subscriptionOptions(
      { chatId },
      {
        onData: () => {
          void queryClient.invalidateQueries({ queryKey: trpc.codeRuns.listByChat.queryKey({ chatId }) });
          void queryClient.invalidateQueries({ queryKey: trpc.decisions.list.queryKey() });
          void queryClient.invalidateQueries({ queryKey: trpc.grants.list.queryKey() });
          void queryClient.invalidateQueries({ queryKey: trpc.appOperations.pendingInputs.queryKey({ chatId }) });
          // The first program run by hand or over the API titles a chat still called "New chat" (titleFromProgram).
          if (queryClient.getQueryData(trpc.chats.byId.queryKey({ id: chatId }))?.title === "New chat") {
            void queryClient.invalidateQueries({ queryKey: trpc.chats.byId.queryKey({ id: chatId }) });
            void queryClient.invalidateQueries({ queryKey: trpc.chats.list.queryKey() });
          }
        },
      },
    ),
  );
  const [code, setCode] = useState(EXAMPLE);
  const [reason, setReason] = useState("");
  const [language, setLanguage] = useState<"javascript" | "typescript">("javascript");
  // The composer's draft survives a reload (app/_lib/drafts.ts): loaded for each chat, then kept as it changes.
  // Until it has loaded the composer cannot be edited or run: what a person typed before it arrived would
  // be replaced by it (or by the example), and a run would take the example instead of their draft.
  const [draftOf, setDraftOf] = useState<string | null>(null);
  const draftLoaded = draftOf === chatId;
  useEffect(() => {
    let current = true;
    setDraftOf(null);
    void loadDraft(chatId).then((draft) => {
      if (!current) return;
      setCode(draft?.code ?? EXAMPLE);
      setReason(draft?.reason ?? "");
      setLanguage(draft?.language ?? "javascript");
      setDraftOf(chatId);
    });
    return () => {
      current = false;
    };
  }, [chatId]);
  useEffect(() => {
    if (!draftLoaded) return;
    saveDraft({ chatId, code, reason, language }, code === EXAMPLE && reason === "" && language === "javascript");
  }, [draftLoaded, chatId, code, reason, language]);
  const [live, setLive] = useState<{ run: CodeRunRecord | null; logs: LogLine[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [controller, setController] = useState<AbortController | null>(null);
  // A run this page is running that was cancelled elsewhere (its card's Cancel, another tab, the API) stops
  // here too: a program busy in guest code never asks the server again, so it would run to its time limit.
  const hostedStatus = runs.data?.find((r) => r.id === live?.run?.id)?.status;
  useEffect(() => {
    if (hostedStatus === "Cancelled") controller?.abort();
  }, [hostedStatus, controller]);

  async function run() {
    setError(null);
    const abort = new AbortController();
    setController(abort);
    setLive({ run: null, logs: [] });
    try {
      await runInBrowser(
        client,
        { chatId, code, reason, language },
        {
          onStarted: (record) => setLive((l) => ({ run: record, logs: l?.logs ?? [] })),
          onLog: (line) => setLive((l) => (l ? { ...l, logs: [...l.logs, line] } : l)),
          signal: abort.signal,
        },
      );
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      await queryClient.invalidateQueries({ queryKey: trpc.codeRuns.listByChat.queryKey({ chatId }) });
      setController(null);
      setLive(null);
    }
  }

  const title = chat.data?.title;
  useEffect(() => {
    if (title) document.title = `${title} · OpenBot`;
  }, [title]);
  if (chat.error)
    return (
      <div className="panel error-text" role="alert">
        {chat.error.message}
      </div>
    );
  const records = runs.data ?? [];
  const pendingCards = (
    <>
      {pauses(decisions.data ?? []).map((group, i) => (
        <DecisionCard key={group[0]!.id} decisions={group} autoFocus={i === 0} />
      ))}
      {inputs.data?.map((i) => (
        <InputForm key={i.operationId} input={i} />
      ))}
      {unknownCalls(records).map((u) => (
        <UnknownCard key={`${u.run.id}:${u.call.index}`} {...u} />
      ))}
      <ChatGrants chatId={chatId} />
    </>
  );
  const shown = live?.run && !records.some((r) => r.id === live.run?.id) ? [...records, live.run] : records;
  return (
    <section className="stack" aria-label="Chat">
      {chat.data ? (
        <ChatHeader chatId={chatId} title={chat.data.title} pinned={chat.data.pinned} />
      ) : (
        <h1 style={{ margin: 0, fontSize: 22 }}>…</h1>
      )}
      {mode.data && !mode.data.modelConfigured && (
        <p className="banner" data-testid="manual-mode">
          No model is configured, so this chat is in manual mode: write a program and run it. It runs in this
          page&apos;s sandbox and calls your Apps as <code>apps.&lt;app&gt;.&lt;tool&gt;(…)</code>.
          {isAdmin && (
            <>
              {" "}
              <Link href="/admin/model">Set a model</Link> to chat with one.
            </>
          )}
        </p>
      )}
      {mode.data?.modelConfigured ? (
        <>
          <ChatThread chatId={chatId} runs={records} beforeComposer={pendingCards} />
          {shown
            .filter((r) => !r.callId)
            .map((r) => (
              <RunCard key={r.id} run={r} liveLogs={live?.run?.id === r.id ? live.logs : undefined} />
            ))}
        </>
      ) : (
        <>
          {shown.length === 0 && <p className="muted">No runs in this chat yet.</p>}
          {shown.map((r) => (
            <RunCard key={r.id} run={r} liveLogs={live?.run?.id === r.id ? live.logs : serverLogs[r.id]} />
          ))}
        </>
      )}
      {!mode.data?.modelConfigured && pendingCards}
      {mode.data?.modelConfigured && !showComposer && (
        <div className="row">
          <button type="button" onClick={() => setShowComposer(true)}>
            Write a program yourself
          </button>
        </div>
      )}
      {(!mode.data?.modelConfigured || showComposer) && (
        <form
          className="panel stack"
          aria-label="Program composer"
          onSubmit={(e) => {
            e.preventDefault();
            if (draftLoaded) void run();
          }}
        >
          <Field id="program" label="Program" hint="The body of an async function. Ctrl+Enter runs it.">
            <textarea
              id="program"
              className="code"
              spellCheck={false}
              value={code}
              readOnly={!draftLoaded}
              aria-busy={!draftLoaded}
              onChange={(e) => setCode(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) {
                  e.preventDefault();
                  e.currentTarget.form?.requestSubmit();
                }
              }}
            />
          </Field>
          <BindingsPanel />
          <div className="grid-2">
            <Field id="reason" label="Reason">
              <input
                id="reason"
                value={reason}
                readOnly={!draftLoaded}
                onChange={(e) => setReason(e.target.value)}
                placeholder="What the program is for"
              />
            </Field>
            <Field id="language" label="Language">
              <select
                id="language"
                value={language}
                disabled={!draftLoaded}
                onChange={(e) => setLanguage(e.target.value as typeof language)}
              >
                <option value="javascript">JavaScript</option>
                <option value="typescript">TypeScript</option>
              </select>
            </Field>
          </div>
          {error && (
            <p role="alert" className="error-text">
              {error}
            </p>
          )}
          <div className="row">
            <button className="primary" type="submit" disabled={!!controller || !code.trim() || !draftLoaded}>
              {controller ? "Running…" : "Run program"}
            </button>
            {controller && (
              <button type="button" onClick={() => controller.abort()}>
                Stop
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
