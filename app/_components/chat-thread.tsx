"use client";
/**
 * The conversation of a chat with a model: messages, streaming assistant text, tool calls (programs as
 * run cards), notices of late results, a composer and a Stop button. While this page shows the chat,
 * the chat's programs run in this page's worker: the page claims each run request the turn publishes.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRef, useState } from "react";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { ChatMessageView } from "@/contracts/turn-events";
import { runTicketInBrowser } from "../_lib/run-in-browser";
import { useTRPC, useTRPCClient } from "../_lib/trpc";
import { JsonTree } from "./json-tree";
import { Markdown } from "./markdown";
import { RunCard } from "./run-card";

/** Example tasks an empty chat offers (they fill the composer; nothing is sent until Send). */
const SUGGESTIONS = [
  "Which calendar meetings on 2026-10-23 and 2026-10-24 have more than 10 attendees?",
  "Read my notes and draft an email to the team",
  "Summarise my week as a Markdown table",
];

export function ChatThread({
  chatId,
  runs,
  beforeComposer,
}: {
  chatId: string;
  runs: CodeRunRecord[];
  beforeComposer?: React.ReactNode;
}) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const messages = useQuery(trpc.turns.messages.queryOptions({ chatId }));
  const [streaming, setStreaming] = useState<{ turnId: string; text: string } | null>(null);
  const [activeTurn, setActiveTurn] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const claimed = useRef(new Set<string>());
  // Set synchronously on submit, so a second Enter before React re-renders cannot send again.
  const sending = useRef(false);
  // Turns whose end already arrived: a fast turn can end before the send's answer comes back.
  const ended = useRef(new Set<string>());
  const [stopped, setStopped] = useState(false);

  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.turns.messages.queryKey({ chatId }) });
    void queryClient.invalidateQueries({ queryKey: trpc.codeRuns.listByChat.queryKey({ chatId }) });
  };
  const refreshChat = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.chats.byId.queryKey({ id: chatId }) });
    void queryClient.invalidateQueries({ queryKey: trpc.chats.list.queryKey() });
  };

  useSubscription(
    trpc.turns.onEvent.subscriptionOptions(
      { chatId },
      {
        onData: (event) => {
          if (event.type === "turn-start") {
            setStopped(false);
            setActiveTurn(event.turnId);
            setStreaming({ turnId: event.turnId, text: "" });
          } else if (event.type === "text-delta") {
            setStreaming((s) =>
              s && s.turnId === event.turnId
                ? { ...s, text: s.text + event.text }
                : { turnId: event.turnId, text: event.text },
            );
          } else if (event.type === "run-request") {
            const key = `${event.runId}:${event.attempt}`;
            if (claimed.current.has(key)) return;
            claimed.current.add(key);
            void client.codeRuns.claim
              .mutate({ runId: event.runId, attempt: event.attempt })
              .then((ticket) => (ticket ? runTicketInBrowser(client, ticket) : null))
              .catch(() => undefined)
              .finally(refresh);
          } else if (event.type === "turn-end") {
            if (event.turnId) ended.current.add(event.turnId);
            if (event.turnId) setActiveTurn((t) => (t === event.turnId ? null : t));
            if (event.status === "Cancelled") setStopped(true);
            // The streamed text stays on screen until the stored messages (which keep it) have loaded.
            void queryClient
              .invalidateQueries({ queryKey: trpc.turns.messages.queryKey({ chatId }) })
              .finally(() => setStreaming((s) => (s && s.turnId === event.turnId ? null : s)));
            refresh();
          } else if (event.type === "chat-title") {
            refreshChat();
          } else {
            refresh();
          }
        },
      },
    ),
  );

  const send = useMutation(
    trpc.turns.send.mutationOptions({
      onSuccess: ({ turnId }) => {
        if (!ended.current.has(turnId)) setActiveTurn(turnId);
        setDraft("");
        refresh();
      },
      onSettled: () => {
        sending.current = false;
      },
    }),
  );
  const stop = useMutation(trpc.turns.stop.mutationOptions({ onSettled: refresh }));
  const runByCall = new Map(runs.filter((r) => r.callId).map((r) => [r.callId!, r]));

  return (
    <section className="stack" aria-label="Conversation">
      {messages.data?.map((m) => (
        <Message key={m.id} message={m} runByCall={runByCall} runs={runs} />
      ))}
      {streaming?.text && (
        <div className="panel" data-testid="assistant-streaming" aria-busy={activeTurn === streaming.turnId}>
          <Markdown text={streaming.text} />
        </div>
      )}
      <p className="sr-only" aria-live="polite" data-testid="turn-status">
        {activeTurn
          ? streaming?.text
            ? "The assistant is answering."
            : "The assistant is working."
          : stopped
            ? "Stopped."
            : ""}
      </p>
      {messages.data?.length === 0 && !streaming && !activeTurn && (
        <div className="panel stack" data-testid="suggestions">
          <h2 style={{ margin: 0, fontSize: 16 }}>Try one of these</h2>
          <div className="row">
            {SUGGESTIONS.map((text) => (
              <button key={text} type="button" className="suggestion" onClick={() => setDraft(text)}>
                {text}
              </button>
            ))}
          </div>
        </div>
      )}
      {beforeComposer}
      <form
        className="panel stack"
        aria-label="Message composer"
        onSubmit={(e) => {
          e.preventDefault();
          if (!draft.trim() || sending.current || activeTurn) return;
          sending.current = true;
          send.mutate({ chatId, message: draft });
        }}
      >
        <div className="field">
          <label htmlFor="message">Message</label>
          <textarea
            id="message"
            rows={3}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
            placeholder="Ask something that needs your Apps…"
          />
        </div>
        {send.error && (
          <p role="alert" className="error-text">
            {send.error.message}
          </p>
        )}
        <div className="row">
          <button className="primary" type="submit" disabled={send.isPending || !!activeTurn || !draft.trim()}>
            Send
          </button>
          {activeTurn && (
            <button type="button" onClick={() => stop.mutate({ turnId: activeTurn })}>
              Stop
            </button>
          )}
          {activeTurn && (
            <span className="muted small" aria-hidden="true">
              The assistant is working…
            </span>
          )}
        </div>
      </form>
    </section>
  );
}

/**
 * A late result (a run or call that waited for a decision) as a person reads it: one line pointing at the
 * run card, which shows the result itself. The JSON after the first line is for the model only.
 */
function noticeText(text: string, runs: CodeRunRecord[]): string {
  const first = text.split("\n")[0] ?? "";
  const finished = /^The code run (\S+) finished\.$/.exec(first);
  if (!finished) return first;
  const run = runs.find((r) => r.id === finished[1]);
  const name = run?.reason ? `“${run.reason}”` : "The program";
  const status = run ? run.status.toLowerCase() : "finished";
  return `${run?.reason ? `The program ${name}` : name} ${status === "completed" ? "finished" : `ended ${status}`} after your decision; its card above shows the result.`;
}

function Message({
  message,
  runByCall,
  runs,
}: {
  message: ChatMessageView;
  runByCall: Map<string, CodeRunRecord>;
  runs: CodeRunRecord[];
}) {
  if (message.role === "tool") return null;
  if (message.role === "notice") {
    return (
      <p className="banner" data-testid="notice">
        {noticeText(message.text, runs)}
      </p>
    );
  }
  return (
    <div className="stack" data-testid={`message-${message.role}`}>
      {message.text && message.role === "user" && (
        <div className="panel" style={{ marginLeft: "15%", background: "var(--code-bg)" }}>
          <p style={{ margin: 0, whiteSpace: "pre-wrap" }}>{message.text}</p>
        </div>
      )}
      {message.text && message.role === "assistant" && (
        <div className="panel stack" data-stopped={message.stopped ? "true" : undefined}>
          <Markdown text={message.text} />
          {message.stopped && (
            <span className="stopped-mark" data-testid="stopped-mark" style={{ alignSelf: "flex-start" }}>
              Stopped — the answer was cut short here
            </span>
          )}
        </div>
      )}
      {message.toolCalls.map((call) => {
        const run = runByCall.get(call.toolCallId);
        if (run) return <RunCard key={call.toolCallId} run={run} />;
        return (
          <details key={call.toolCallId} className="panel small">
            <summary>
              Tool call <code>{call.toolName}</code>
            </summary>
            <JsonTree value={call.input} />
          </details>
        );
      })}
    </div>
  );
}
