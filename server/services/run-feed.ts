/**
 * Live feeds of a chat's code runs for a page that reads the chat: a notice each time a run changes
 * (read the record then) and the log lines of its server-side runs as they happen. The chat is checked
 * once, when the feed starts; each run is told apart by its chat.
 */
import "server-only";
import { on } from "node:events";
import { readableChat } from "./chats";
import type { ServiceContext } from "./context";

export async function* runChanges(
  ctx: ServiceContext,
  chatId: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ runId: string | null; at: number }> {
  const { db, events } = ctx.platform;
  await readableChat(db, ctx.principal, chatId);
  // Listening before the chat's runs are read: a run created while they are read is either in the rows
  // or its creation (which names the chat) waits in `changes`. Listening after the read lost such a run's
  // every later change (they name only the run), and its card stayed Running after it ended.
  const changes = on(events, "run", { signal });
  const runsOfChat = new Set(
    (await db.query<{ id: string }>("select id from code_runs where chat_id = $1", [chatId])).map((r) => r.id),
  );
  // One change first, so the page reads the runs as of now. A run that changed between the page's first
  // read and this subscription (a reload's re-sent result landing) is not missed.
  yield { runId: null, at: Date.now() };
  for await (const [event] of changes) {
    const { runId, chatId: of } = event as { runId?: string | null; chatId?: string };
    if (of === chatId && runId) runsOfChat.add(runId);
    if (of === chatId || (runId && runsOfChat.has(runId))) yield { runId: runId ?? null, at: Date.now() };
  }
}

export async function* runLogs(
  ctx: ServiceContext,
  chatId: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ runId: string; line: { level: string; text: string } }> {
  const { db, events } = ctx.platform;
  await readableChat(db, ctx.principal, chatId);
  const isMine = new Map<string, boolean>();
  for await (const [event] of on(events, "run-log", { signal })) {
    const { runId, line } = event as { runId: string; line: { level: string; text: string } };
    if (!isMine.has(runId)) {
      const rows = await db.query("select 1 from code_runs where id = $1 and chat_id = $2", [runId, chatId]);
      isMine.set(runId, rows.length > 0);
    }
    if (isMine.get(runId)) yield { runId, line };
  }
}
