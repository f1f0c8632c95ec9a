/**
 * The turn loop. A turn sends the chat to the model with openbot_code_api and openbot_run_code (when
 * Code Mode is on and there are Apps) beside the normal App tools, which pass the very same capability
 * check. In the web chat a program runs in the page's worker: the loop publishes the run's ticket and
 * the page claims it; with no page (API turns, a closed tab) the server runner runs it. A run that waits
 * for a decision gives a waiting result at once and the turn goes on; when it completes later, its
 * result is posted into the chat and the model continues.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import {
  generateText,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  stepCountIs,
  streamText,
  type ToolSet,
  tool,
} from "ai";
import { z } from "zod";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { TurnEvent, TurnStatus } from "@/contracts/turn-events";
import { canonicalJson } from "@/worker/canonical-json";
import { declarations } from "../../apps/declarations";
import type { ToolEntry } from "../../apps/registry";
import { logFailure } from "../../log";
import type { Platform } from "../../platform";
import { checkCall, performAppCall } from "../app-calls";
import { type Principal, principalFromKeyId, requireAuth, requirePermission } from "../auth";
import { autoTitle, deleteChatRows, ownedChat, readableChat, touchChat } from "../chats";
import { getRun, readRecordInternal } from "../code-runs/records";
import { cancelRun, claimRun, runTicketOnServer, startRun } from "../code-runs/runs";
import type { ServiceContext } from "../context";
import { requestDecision } from "../decisions";
import { AppError, invalidInput } from "../errors";
import { readSettings } from "../settings";
import { resolveModel } from "./models";
import { CODE_API_DESCRIPTION, CODE_API_TOOL, RUN_CODE_TOOL, runCodeDescription, SYSTEM_PROMPT } from "./prompt";

export interface ChatMessageView {
  id: string;
  turnId: string | null;
  kind: "model" | "notice";
  role: "user" | "assistant" | "tool" | "notice";
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input?: unknown }[];
  toolResults: { toolCallId: string; toolName: string; output?: unknown; codeRunId: string | null }[];
  /** An assistant answer cut short by Stop: what streamed before it, kept. */
  stopped?: boolean;
  createdAt: number;
}

export interface TurnView {
  id: string;
  chatId: string;
  status: TurnStatus;
  error: string | null;
  messages: ChatMessageView[];
  createdAt: number;
  updatedAt: number;
}

const emit = (platform: Platform, chatId: string, event: TurnEvent) => platform.events.emit("turn", { chatId, event });

const sendInput = z.object({
  message: z
    .string({ error: "message is required" })
    .trim()
    .min(1, "message must not be empty")
    .max(100_000, "message must be at most 100000 characters"),
});

/** How long the loop waits for a page to claim a program before the server runner runs it. */
const CLAIM_WAIT_MS = 4_000;

/** Starts a turn: stores the message and runs the loop in the background. Answers with the turn id. */
export async function startTurn(
  ctx: ServiceContext,
  chatId: string,
  input: unknown,
  host: "browser" | "server",
): Promise<{ turnId: string; done: Promise<void> }> {
  const p = requirePermission(ctx.principal, "sessions.write");
  const parsed = sendInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  await ownedChat(ctx.platform.db, p, chatId);
  const model = await resolveModel(ctx.platform);
  if (!model)
    throw new AppError(
      "UNAVAILABLE",
      "No model is configured, so this chat is in manual mode: write and run programs yourself, or ask an admin to set a model in Admin → Model.",
    );
  const turnId = await createTurn(ctx.platform, p, chatId, host, { exclusive: true });
  const first =
    (await ctx.platform.db.query("select 1 from messages where chat_id = $1 limit 1", [chatId])).length === 0;
  await appendMessages(ctx.platform, chatId, turnId, [{ role: "user", content: parsed.data.message }]);
  if (first) ctx.platform.track(titleChat(ctx.platform, chatId, parsed.data.message, model));
  const done = runLoop(ctx.platform, p, chatId, turnId, model, host);
  ctx.platform.track(done);
  return { turnId, done };
}

/** Runs a turn to its end and answers with it (API turns: the server runner runs the programs). */
export async function runTurnToEnd(ctx: ServiceContext, chatId: string, input: unknown): Promise<TurnView> {
  requirePermission(ctx.principal, "sessions.read");
  const { turnId, done } = await startTurn(ctx, chatId, input, "server");
  await done;
  return getTurn(ctx, turnId);
}

/**
 * A chat has at most one turn a person started running at a time: `exclusive` inserts the turn only if
 * none runs (one statement, so two sends at once cannot both pass) and answers CONFLICT otherwise. A
 * "Running" turn this process does not drive was cut off by a restart and is closed as Failed first.
 */
async function createTurn(
  platform: Platform,
  p: Principal,
  chatId: string,
  host: "browser" | "server",
  options: { exclusive?: boolean } = {},
): Promise<string> {
  const turnId = `turn_${randomUUID()}`;
  const now = Date.now();
  platform.activeTurns.set(turnId, new AbortController());
  const values = [turnId, chatId, host, p.userId, p.keyId, now];
  if (options.exclusive) {
    const running = await platform.db.query<{ id: string }>(
      "select id from turns where chat_id = $1 and status = 'Running'",
      [chatId],
    );
    for (const r of running.filter((r) => !platform.activeTurns.has(r.id))) {
      await platform.db.query(
        "update turns set status = 'Failed', error = $1, updated_at = $2 where id = $3 and status = 'Running'",
        ["The turn was interrupted.", now, r.id],
      );
    }
    const inserted = await platform.db.query(
      `insert into turns (id, chat_id, status, host, created_by, api_key_id, created_at, updated_at)
       select $1, $2, 'Running', $3, $4, $5, $6, $6 where not exists (select 1 from turns where chat_id = $2 and status = 'Running')
       returning id`,
      values,
    );
    if (!inserted.length) {
      platform.activeTurns.delete(turnId);
      throw new AppError(
        "CONFLICT",
        "The assistant is still answering in this chat; wait for it to finish or stop it before sending another message.",
      );
    }
  } else {
    await platform.db.query(
      "insert into turns (id, chat_id, status, host, created_by, api_key_id, created_at, updated_at) values ($1, $2, 'Running', $3, $4, $5, $6, $6)",
      values,
    );
  }
  await touchChat(platform.db, chatId);
  emit(platform, chatId, { type: "turn-start", turnId });
  return turnId;
}

async function appendMessages(
  platform: Platform,
  chatId: string,
  turnId: string | null,
  messages: ModelMessage[],
  kind: "model" | "notice" = "model",
) {
  for (const message of messages) {
    const id = `msg_${randomUUID()}`;
    const [row] = await platform.db.query<{ seq: string }>(
      "select coalesce(max(seq), 0) + 1 as seq from messages where chat_id = $1",
      [chatId],
    );
    await platform.db.query(
      "insert into messages (id, chat_id, turn_id, seq, kind, content_enc, created_at) values ($1, $2, $3, $4, $5, $6, $7)",
      [
        id,
        chatId,
        turnId,
        Number(row?.seq ?? 1),
        kind,
        platform.seal(`messages:${id}:content`, JSON.stringify(message)),
        Date.now(),
      ],
    );
  }
}

async function loadModelMessages(platform: Platform, chatId: string): Promise<ModelMessage[]> {
  const rows = await platform.db.query<{ id: string; content_enc: string }>(
    "select id, content_enc from messages where chat_id = $1 order by seq",
    [chatId],
  );
  return rows.map((r) => JSON.parse(platform.open(`messages:${r.id}:content`, r.content_enc)) as ModelMessage);
}

/** Direct tool names: `<app>__<tool>` (providers allow [A-Za-z0-9_-]{1,64}). */
const directName = (entry: ToolEntry) => entry.binding.replace(".", "__").slice(0, 64);

async function runLoop(
  platform: Platform,
  principal: Principal,
  chatId: string,
  turnId: string,
  model: LanguageModel,
  host: "browser" | "server",
) {
  const controller = platform.activeTurns.get(turnId) ?? new AbortController();
  platform.activeTurns.set(turnId, controller);
  let status: TurnStatus = "Completed";
  let error: string | null = null;
  // What a stopped turn keeps: the messages of its finished steps and the text of the step it was in.
  let finished: ModelMessage[] = [];
  let partial = "";
  try {
    const settings = await readSettings(platform.db);
    const apps = platform.apps.tools();
    const ctx: ServiceContext = { platform, principal };
    const tools: ToolSet = {};
    if (settings.codeMode.enabled && apps.length > 0) {
      tools[CODE_API_TOOL] = tool({
        description: CODE_API_DESCRIPTION,
        inputSchema: z.object({ query: z.string().optional(), connection: z.string().optional() }),
        execute: async ({ query, connection }) => ({
          declarations: await declarations(platform.apps.tools(), { query, connection }),
        }),
      });
      tools[RUN_CODE_TOOL] = tool({
        description: runCodeDescription(apps, settings.codeMode),
        inputSchema: z.object({
          code: z.string().describe("The program: the body of an async function."),
          reason: z.string().describe("What the program is for, in a short sentence."),
          language: z.enum(["javascript", "typescript"]).optional(),
        }),
        execute: async (args, { toolCallId }) =>
          runProgramForTurn(ctx, chatId, turnId, toolCallId, args, host, controller.signal),
      });
    }
    for (const entry of apps) {
      tools[directName(entry)] = tool({
        description: `App ${JSON.stringify(entry.connectionName)}, tool ${JSON.stringify(entry.name)}.`,
        inputSchema: jsonSchema(entry.inputSchema as Parameters<typeof jsonSchema>[0]),
        execute: async (args, { toolCallId }) => callToolDirectly(ctx, chatId, toolCallId, entry, args),
      });
    }
    const history = await loadModelMessages(platform, chatId);
    const result = streamText({
      model,
      system: SYSTEM_PROMPT,
      messages: history,
      tools,
      stopWhen: stepCountIs(10),
      abortSignal: controller.signal,
      maxRetries: 1,
      onStepFinish: (step) => {
        finished = [...step.response.messages];
        partial = "";
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        partial += part.text;
        emit(platform, chatId, { type: "text-delta", turnId, text: part.text });
      } else if (part.type === "tool-call")
        emit(platform, chatId, { type: "tool-call", turnId, toolCallId: part.toolCallId, toolName: part.toolName });
      else if (part.type === "tool-result")
        emit(platform, chatId, { type: "tool-result", turnId, toolCallId: part.toolCallId });
      else if (part.type === "error") throw part.error;
    }
    const response = await result.response;
    await appendMessages(platform, chatId, turnId, response.messages);
  } catch (cause) {
    if (controller.signal.aborted) {
      status = "Cancelled";
      error = "The turn was stopped.";
      const kept: ModelMessage[] = [...finished];
      if (partial)
        kept.push({
          role: "assistant",
          content: [{ type: "text", text: partial }],
          providerOptions: { openbot: { stopped: true } },
        });
      await appendMessages(platform, chatId, turnId, kept).catch((cause) =>
        logFailure("turn_partial_not_saved", cause, { turnId }),
      );
    } else {
      status = "Failed";
      const errorId = logFailure("turn_failed", cause, { turnId });
      error = `The model could not answer (error id ${errorId}).`;
    }
  } finally {
    platform.activeTurns.delete(turnId);
    await platform.db.query("update turns set status = $1, error = $2, updated_at = $3 where id = $4", [
      status,
      error,
      Date.now(),
      turnId,
    ]);
    emit(platform, chatId, { type: "turn-end", turnId, status });
  }
}

/** What the model gets back from openbot_run_code. */
export function runToolResult(record: CodeRunRecord): Record<string, unknown> {
  const calls = record.calls.map((c) => ({
    binding: c.binding,
    status: c.rejection?.name ?? c.app?.status ?? "NotStarted",
  }));
  if (record.status === "Waiting") {
    return {
      status: "waiting",
      runId: record.id,
      message:
        "The program is waiting for a person's decision. Its result will be posted into the chat when it completes; do not run it again.",
      calls,
    };
  }
  if (record.result?._tag === "Completed") {
    return {
      status: "completed",
      runId: record.id,
      value: record.result.value ?? null,
      logs: record.result.logs,
      output: record.result.output,
      calls,
    };
  }
  const failed = record.result?._tag === "Failed" ? record.result : null;
  return {
    status: "failed",
    runId: record.id,
    reason: failed?.reason ?? record.status,
    message: failed?.message ?? "",
    logs: failed?.logs ?? [],
    calls,
  };
}

async function runProgramForTurn(
  ctx: ServiceContext,
  chatId: string,
  turnId: string,
  toolCallId: string,
  args: { code: string; reason: string; language?: "javascript" | "typescript" },
  host: "browser" | "server",
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const { ticket, record } = await startRun(
    ctx,
    { chatId, code: args.code, reason: args.reason, language: args.language ?? "javascript" },
    host,
    { turnId, callId: toolCallId },
  );
  if (!ticket) return runToolResult(record);
  const { platform } = ctx;
  const onAbort = () => void cancelRun(ctx, ticket.runId).catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    let claimedByPage = false;
    if (host === "browser" && (await platform.cluster.pagePresent(chatId))) {
      emit(platform, chatId, { type: "run-request", turnId, runId: ticket.runId, attempt: ticket.attempt });
      claimedByPage = await waitFor(platform, ticket.runId, CLAIM_WAIT_MS, signal, async () => {
        const row = (
          await platform.db.query<{ claimed_at: string | null }>("select claimed_at from code_runs where id = $1", [
            ticket.runId,
          ])
        )[0];
        return row?.claimed_at != null;
      });
    }
    if (claimedByPage) {
      await waitFor(platform, ticket.runId, Number.POSITIVE_INFINITY, signal, async () => {
        const row = (
          await platform.db.query<{ status: string }>("select status from code_runs where id = $1", [ticket.runId])
        )[0];
        return row?.status !== "Running";
      });
    } else if (await claimRun(platform, ticket.runId, ticket.attempt)) {
      await runTicketOnServer(ctx, ticket, "bounded");
    }
    const final = await getRun(ctx, ticket.runId);
    if (final.status !== "Waiting")
      await platform.db.query("update code_runs set reported = true where id = $1", [ticket.runId]);
    return runToolResult(final);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Waits until `check` is true, re-checking on each change of the run and every second. */
async function waitFor(
  platform: Platform,
  runId: string,
  timeoutMs: number,
  signal: AbortSignal,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!signal.aborted) {
    if (await check()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        platform.events.off("run", onRun);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const onRun = (e: { runId: string | null }) => e.runId === runId && done();
      const timer = setTimeout(done, Math.min(left, 1_000));
      platform.events.on("run", onRun);
      signal.addEventListener("abort", done, { once: true });
    });
  }
  return false;
}

/** A normal App tool call from the model: the same capability check, an App operation like any other. */
async function callToolDirectly(
  ctx: ServiceContext,
  chatId: string,
  toolCallId: string,
  entry: ToolEntry,
  args: unknown,
) {
  const principal = requireAuth(ctx.principal);
  const argsJson = canonicalJson(JSON.stringify(args ?? {}));
  const check = await checkCall(ctx.platform, principal, entry, argsJson);
  if (check.verdict === "refuse") return { error: { name: check.outcome.name, message: check.outcome.message } };
  if (check.verdict === "ask") {
    const decisionId = await requestDecision(ctx.platform, {
      chatId,
      runId: null,
      index: null,
      toolCallId,
      callId: toolCallId,
      entry,
      argsJson,
      capability: check.capability,
      code: "",
    });
    return {
      status: "waiting",
      decisionId,
      message: "This call needs a person's decision; its result will be posted into the chat.",
    };
  }
  const { outcome } = await performAppCall(ctx.platform, {
    chatId,
    runId: null,
    index: null,
    entry,
    argsJson,
    principal,
  });
  return outcome.type === "ok"
    ? (JSON.parse(outcome.resultJson) as unknown)
    : { error: { name: outcome.name, message: outcome.message, details: outcome.details } };
}

/**
 * A result that arrives after its turn moved on (a run or call that waited for a decision): posted into
 * the chat, and if a model is configured the conversation continues with it.
 */
export async function postLateResult(
  platform: Platform,
  chatId: string,
  keyId: string | null,
  summary: string,
  payload: unknown,
): Promise<void> {
  const text = `${summary}\n${JSON.stringify(payload).slice(0, 20_000)}`;
  await appendMessages(platform, chatId, null, [{ role: "user", content: `[OpenBot] ${text}` }], "notice");
  emit(platform, chatId, { type: "turn-end", turnId: "", status: "Completed" });
  const principal = keyId ? await principalFromKeyId(platform.db, keyId) : null;
  const model = await resolveModel(platform);
  if (!principal || !model) return;
  const turnId = await createTurn(platform, principal, chatId, "server");
  await runLoop(platform, principal, chatId, turnId, model, "server");
}

/** Called when a run ends: if its turn only got "waiting", the result goes into the chat now. */
export async function reportRunIfLate(platform: Platform, runId: string): Promise<void> {
  const rows = await platform.db.query<{ chat_id: string; api_key_id: string | null; turn_id: string | null }>(
    `update code_runs set reported = true where id = $1 and reported = false and turn_id is not null
     and status in ('Completed', 'Failed', 'Cancelled') and exists (select 1 from decisions d where d.run_id = $1)
     returning chat_id, api_key_id, turn_id`,
    [runId],
  );
  const row = rows[0];
  if (!row) return;
  const record = await readRecordInternal(platform, runId);
  const payload = record ? runToolResult(record) : { runId };
  await postLateResult(platform, row.chat_id, row.api_key_id, `The code run ${runId} finished.`, payload);
}

function toView(
  row: { id: string; turn_id: string | null; kind: "model" | "notice"; created_at: string },
  message: ModelMessage,
  runsByCall: Map<string, string>,
): ChatMessageView {
  const view: ChatMessageView = {
    id: row.id,
    turnId: row.turn_id,
    kind: row.kind,
    role: row.kind === "notice" ? "notice" : (message.role as ChatMessageView["role"]),
    text: "",
    toolCalls: [],
    toolResults: [],
    createdAt: Number(row.created_at),
  };
  if (message.role === "assistant" && message.providerOptions?.openbot?.stopped === true) view.stopped = true;
  if (typeof message.content === "string") view.text = message.content.replace(/^\[OpenBot\] /, "");
  else {
    for (const part of message.content) {
      if (part.type === "text") view.text += part.text;
      else if (part.type === "tool-call")
        view.toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
      else if (part.type === "tool-result") {
        const output = part.output.type === "json" || part.output.type === "text" ? part.output.value : part.output;
        view.toolResults.push({
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output,
          codeRunId: runsByCall.get(part.toolCallId) ?? null,
        });
      }
    }
  }
  return view;
}

/** The chat's messages as the UI shows them. */
export async function listMessages(ctx: ServiceContext, chatId: string): Promise<ChatMessageView[]> {
  const p = requirePermission(ctx.principal, "sessions.read");
  await readableChat(ctx.platform.db, p, chatId);
  const rows = await ctx.platform.db.query<{
    id: string;
    turn_id: string | null;
    kind: "model" | "notice";
    content_enc: string;
    created_at: string;
  }>("select id, turn_id, kind, content_enc, created_at from messages where chat_id = $1 order by seq", [chatId]);
  const runs = await ctx.platform.db.query<{ id: string; call_id: string }>(
    "select id, call_id from code_runs where chat_id = $1 and call_id is not null",
    [chatId],
  );
  const runsByCall = new Map(runs.map((r) => [r.call_id, r.id]));
  return rows.map((r) =>
    toView(r, JSON.parse(ctx.platform.open(`messages:${r.id}:content`, r.content_enc)) as ModelMessage, runsByCall),
  );
}

export async function getTurn(ctx: ServiceContext, turnId: string): Promise<TurnView> {
  const p = requirePermission(ctx.principal, "sessions.read");
  const row = (
    await ctx.platform.db.query<{
      id: string;
      chat_id: string;
      status: TurnStatus;
      error: string | null;
      created_at: string;
      updated_at: string;
    }>("select * from turns where id = $1", [turnId])
  )[0];
  if (!row) throw new AppError("NOT_FOUND", "No such turn.");
  await readableChat(ctx.platform.db, p, row.chat_id).catch(() => {
    throw new AppError("NOT_FOUND", "No such turn.");
  });
  const messages = (await listMessages(ctx, row.chat_id)).filter((m) => m.turnId === turnId);
  return {
    id: row.id,
    chatId: row.chat_id,
    status: row.status,
    error: row.error,
    messages,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * Titles a new chat from its first message: at once with its first words, then (if the model answers)
 * with a short title the model writes. A title the person set in the meantime is kept.
 */
async function titleChat(platform: Platform, chatId: string, message: string, model: LanguageModel): Promise<void> {
  const words = message.replace(/\s+/g, " ").trim().split(" ").slice(0, 8).join(" ");
  const quick = words.length > 60 ? `${words.slice(0, 59)}…` : words;
  if (!(await autoTitle(platform.db, chatId, "New chat", quick))) return;
  emit(platform, chatId, { type: "chat-title", turnId: "", title: quick });
  try {
    const answer = await generateText({
      model,
      maxRetries: 0,
      abortSignal: AbortSignal.timeout(15_000),
      messages: [
        {
          role: "user",
          content: `Write a title for this chat of at most six words. Answer with the title only.\n\nFirst message: ${message.slice(0, 2_000)}`,
        },
      ],
    });
    const title = answer.text
      .replace(/^["'\s#*]+|["'\s.*]+$/g, "")
      .replace(/\s+/g, " ")
      .slice(0, 80);
    if (title && (await autoTitle(platform.db, chatId, quick, title)))
      emit(platform, chatId, { type: "chat-title", turnId: "", title });
  } catch (cause) {
    logFailure("chat_title_failed", cause, { chatId });
  }
}

/** Interrupts a turn: the model stream stops and its running programs are cancelled. */
export async function stopTurn(ctx: ServiceContext, turnId: string): Promise<TurnView> {
  requirePermission(ctx.principal, "sessions.write");
  const view = await getTurn(ctx, turnId);
  await ownedChat(ctx.platform.db, ctx.principal, view.chatId);
  ctx.platform.events.emit("turn-stop", { turnId });
  const running = await ctx.platform.db.query<{ id: string }>(
    "select id from code_runs where turn_id = $1 and status in ('Queued', 'Running', 'Waiting')",
    [turnId],
  );
  for (const r of running) await cancelRun(ctx, r.id).catch(() => undefined);
  return getTurn(ctx, turnId);
}

/** Wires the agent to the platform's domain events (the composition root does this once per platform). */
export function subscribeAgent(platform: Platform): void {
  platform.events.on("direct-call-settled", ({ chatId, keyId, summary, payload }) =>
    platform.track(postLateResult(platform, chatId, keyId, summary, payload)),
  );
}

/** Deletes a chat (owner or admin, with sessions.write): its turns stop, its runs are cancelled, then every row goes. */
export async function deleteChat(ctx: ServiceContext, chatId: string): Promise<{ ok: true; id: string }> {
  requirePermission(ctx.principal, "sessions.write");
  await ownedChat(ctx.platform.db, ctx.principal, chatId);
  const turns = await ctx.platform.db.query<{ id: string }>(
    "select id from turns where chat_id = $1 and status = 'Running'",
    [chatId],
  );
  for (const t of turns) ctx.platform.events.emit("turn-stop", { turnId: t.id });
  // Marked reported first: a run cancelled here must not post its late result into the chat being deleted.
  const running = await ctx.platform.db.query<{ id: string }>(
    "update code_runs set reported = true where chat_id = $1 and status in ('Queued', 'Running', 'Waiting') returning id",
    [chatId],
  );
  for (const r of running) await cancelRun(ctx, r.id).catch(() => undefined);
  await deleteChatRows(ctx.platform.db, chatId);
  return { ok: true, id: chatId };
}
