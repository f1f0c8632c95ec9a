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
import { useState } from "react";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { LogLine } from "@/contracts/engine";
import { runInBrowser } from "../_lib/run-in-browser";
import { useTRPC, useTRPCClient } from "../_lib/trpc";
import { BindingsPanel } from "./bindings-panel";
import { ChatThread } from "./chat-thread";
import { DecisionCard } from "./decision-card";
import { InputForm } from "./input-form";
import { RunCard } from "./run-card";
import { ErrorText, Field } from "./field";

const EXAMPLE = `const [today, tomorrow] = await Promise.all([
  apps.work_calendar.list_events({ day: "2026-10-23" }),
  apps.work_calendar.list_events({ day: "2026-10-24" }),
])
const busy = [today, tomorrow].flatMap((result) => result.structuredContent.events)
console.log("events", busy.length)
return busy.filter((event) => event.attendees > 10).map((event) => event.title)`;

export function ChatWorkspace({ chatId }: { chatId?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const chats = useQuery(trpc.chats.list.queryOptions());
  const create = useMutation(
    trpc.chats.create.mutationOptions({
      onSuccess: async (chat) => {
        await queryClient.invalidateQueries({ queryKey: trpc.chats.list.queryKey() });
        router.push(`/chats/${chat.id}`);
      },
    }),
  );
  return (
    <div className="chat-layout">
      <aside className="panel stack" aria-label="Chats">
        <button className="primary" type="button" onClick={() => create.mutate({ title: `Chat ${new Date().toLocaleString()}` })} disabled={create.isPending}>
          New chat
        </button>
        <ErrorText error={create.error} className="small" />
        <ul className="chat-list">
          {chats.data?.map((c) => (
            <li key={c.id}>
              <Link href={`/chats/${c.id}`} aria-current={c.id === chatId ? "page" : undefined}>{c.title}</Link>
            </li>
          ))}
        </ul>
        {chats.data?.length === 0 && <p className="muted small">No chats yet.</p>}
      </aside>
      {chatId ? <ChatView chatId={chatId} /> : <div className="panel muted">Pick a chat or start a new one.</div>}
    </div>
  );
}

function ChatView({ chatId }: { chatId: string }) {
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
      { onData: ({ runId, line }) => setServerLogs((all) => ({ ...all, [runId]: [...(all[runId] ?? []), line as LogLine] })) },
    ),
  );
  useSubscription(
    trpc.codeRuns.onChange.subscriptionOptions(
      { chatId },
      {
        onData: () => {
          void queryClient.invalidateQueries({ queryKey: trpc.codeRuns.listByChat.queryKey({ chatId }) });
          void queryClient.invalidateQueries({ queryKey: trpc.decisions.list.queryKey() });
          void queryClient.invalidateQueries({ queryKey: trpc.appOperations.pendingInputs.queryKey({ chatId }) });
        },
      },
    ),
  );
  const [code, setCode] = useState(EXAMPLE);
  const [reason, setReason] = useState("");
  const [language, setLanguage] = useState<"javascript" | "typescript">("javascript");
  const [live, setLive] = useState<{ run: CodeRunRecord | null; logs: LogLine[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [controller, setController] = useState<AbortController | null>(null);

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

  if (chat.error) return <div className="panel error-text" role="alert">{chat.error.message}</div>;
  const records = runs.data ?? [];
  const pendingCards = (
    <>
      {decisions.data?.map((d) => (
        <DecisionCard key={d.id} decision={d} />
      ))}
      {inputs.data?.map((i) => (
        <InputForm key={i.operationId} input={i} />
      ))}
    </>
  );
  const shown = live?.run && !records.some((r) => r.id === live.run?.id) ? [...records, live.run] : records;
  return (
    <section className="stack" aria-label="Chat">
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h1 style={{ margin: 0, fontSize: 22 }}>{chat.data?.title ?? "…"}</h1>
        <Link href={`/chats/${chatId}/runs`} className="small">All code runs</Link>
      </div>
      {mode.data && !mode.data.modelConfigured && (
        <p className="banner" data-testid="manual-mode">
          No model is configured, so this chat is in manual mode: write a program and run it. It runs in this page&apos;s
          sandbox and calls your Apps as <code>apps.&lt;app&gt;.&lt;tool&gt;(…)</code>.
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
          void run();
        }}
      >
        <Field id="program" label="Program" hint="The body of an async function. Ctrl+Enter runs it.">
          <textarea
            id="program"
            className="code"
            spellCheck={false}
            value={code}
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
            <input id="reason" value={reason} onChange={(e) => setReason(e.target.value)} placeholder="What the program is for" />
          </Field>
          <Field id="language" label="Language">
            <select id="language" value={language} onChange={(e) => setLanguage(e.target.value as typeof language)}>
              <option value="javascript">JavaScript</option>
              <option value="typescript">TypeScript</option>
            </select>
          </Field>
        </div>
        {error && <p role="alert" className="error-text">{error}</p>}
        <div className="row">
          <button className="primary" type="submit" disabled={!!controller || !code.trim()}>
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
