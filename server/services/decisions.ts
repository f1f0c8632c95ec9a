/**
 * Decisions: a call that needs a person's answer pauses its program; the chat's owner or an admin
 * answers once (a second answer is a conflict). This module owns the decisions table and nothing else:
 * a decided program call emits `decision-decided` and the run is run again from the top (boot.ts wires
 * it to the runner), where the journal reads the decision's status: an allowed call is sent, a denied
 * one throws AppCallDenied. A decided direct call is sent here (allow) or reported (deny).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ToolEntry } from "../apps/registry";
import type { Db } from "../db/client";
import type { Platform } from "../platform";
import { type AskContext, performAppCall } from "./app-calls";
import { isAdmin, type Principal, requirePermission } from "./auth";
import { ownedChat } from "./chats";
import type { ServiceContext } from "./context";
import { AppError, invalidInput, isAppError } from "./errors";
import { checkRemember, rememberDecision } from "./grants";

export interface DecisionRequest {
  capability: { action: "apps.call"; target: string };
  toolCallId: string;
  app: { id: string; callId: string; binding: string; tool: string /** Always present. */; arguments?: unknown };
  code: { run: string; index: number; code: string };
  /** Why it is asked beyond its policy (untrusted content read before), and where its argument strings came from. */
  context?: AskContext;
}

export interface DecisionView {
  id: string;
  chatId: string;
  runId: string | null;
  status: "pending" | "allowed" | "denied" | "withdrawn";
  request: DecisionRequest;
  /** What the App says about the tool now (titles and description are the App's untrusted text); null if it is gone. */
  tool: {
    appName: string;
    title: string | null;
    description: string;
    annotations: { readOnly: boolean; destructive: boolean; openWorld: boolean };
  } | null;
  decidedBy: string | null;
  createdAt: number;
  decidedAt: number | null;
}

interface Row {
  id: string;
  chat_id: string;
  run_id: string | null;
  call_index: number | null;
  status: DecisionView["status"];
  request_enc: string;
  decided_by: string | null;
  created_at: string | number;
  decided_at: string | number | null;
}

const toView = (platform: Platform, r: Row): DecisionView => ({
  id: r.id,
  chatId: r.chat_id,
  runId: r.run_id,
  status: r.status,
  ...withTool(platform, JSON.parse(platform.open(`decisions:${r.id}:request`, r.request_enc)) as DecisionRequest),
  decidedBy: r.decided_by,
  createdAt: Number(r.created_at),
  decidedAt: r.decided_at === null ? null : Number(r.decided_at),
});

function withTool(platform: Platform, request: DecisionRequest): Pick<DecisionView, "request" | "tool"> {
  const entry = platform.apps.tools().find((t) => t.binding === request.app.binding);
  if (!entry) return { request, tool: null };
  const a = entry.annotations ?? {};
  return {
    request,
    tool: {
      appName: entry.connectionName,
      title: typeof entry.title === "string" ? entry.title : typeof a.title === "string" ? a.title : null,
      description: entry.description,
      // MCP defaults: destructiveHint and openWorldHint are true unless the tool says otherwise.
      annotations: {
        readOnly: a.readOnlyHint === true,
        destructive: a.readOnlyHint !== true && a.destructiveHint !== false,
        openWorld: a.openWorldHint !== false,
      },
    },
  };
}

const listInput = z.object({
  status: z
    .enum(["pending", "allowed", "denied", "withdrawn"], {
      error: "status must be pending, allowed, denied or withdrawn",
    })
    .optional(),
  chatId: z.string().optional(),
});

/** Decisions in chats the caller may decide in (owner, or any for an admin). */
export async function listDecisions(ctx: ServiceContext, input: unknown): Promise<DecisionView[]> {
  const p = requirePermission(ctx.principal, "apps.use");
  const parsed = listInput.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const where: string[] = [];
  const params: unknown[] = [];
  if (parsed.data.status) where.push(`d.status = $${params.push(parsed.data.status)}`);
  if (parsed.data.chatId) where.push(`d.chat_id = $${params.push(parsed.data.chatId)}`);
  if (!isAdmin(p)) where.push(`c.owner_id = $${params.push(p.userId)}`);
  const rows = await ctx.platform.db.query<Row>(
    `select d.* from decisions d join chats c on c.id = d.chat_id ${where.length ? `where ${where.join(" and ")}` : ""} order by d.created_at, d.id`,
    params,
  );
  return rows.map((r) => toView(ctx.platform, r));
}

const decideInput = z.object({
  decision: z.enum(["allow", "deny"], { error: 'decision must be "allow" or "deny"' }),
  remember: z.unknown().optional(),
});

export async function decide(ctx: ServiceContext, id: string, input: unknown): Promise<DecisionView> {
  const p: Principal = requirePermission(ctx.principal, "apps.use");
  const parsed = decideInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const { db } = ctx.platform;
  const row = (await db.query<Row>("select * from decisions where id = $1", [id]))[0];
  if (!row) throw new AppError("NOT_FOUND", "No such decision.");
  await ownedChat(db, p, row.chat_id).catch((error: unknown) => {
    throw isAppError(error) && error.code === "FORBIDDEN" ? error : new AppError("NOT_FOUND", "No such decision.");
  });
  const remember = checkRemember(p, parsed.data.decision, row.run_id, parsed.data.remember);
  const status = parsed.data.decision === "allow" ? "allowed" : "denied";
  const updated = await db.query<Row>(
    "update decisions set status = $1, decided_by = $2, decided_at = $3 where id = $4 and status = 'pending' returning *",
    [status, p.userId, Date.now(), id],
  );
  if (!updated[0])
    throw new AppError("CONFLICT", `This decision was already taken (${row.status}).`, { status: row.status });
  const view = toView(ctx.platform, updated[0]);
  if (remember)
    await rememberDecision(
      ctx.platform,
      p,
      { id, chatId: row.chat_id, runId: row.run_id, app: view.request.app },
      remember,
    );
  if (row.run_id) ctx.platform.events.emit("decision-decided", { decisionId: id, runId: row.run_id });
  else ctx.platform.track(finishDirectCall(ctx, view));
  ctx.platform.events.emit("run", { runId: row.run_id, chatId: row.chat_id });
  return view;
}

/** The status of one decision, for the journal's answer to the call that waits on it (null if gone). */
export async function decisionStatus(db: Db, id: string): Promise<DecisionView["status"] | null> {
  const rows = await db.query<{ status: DecisionView["status"] }>("select status from decisions where id = $1", [id]);
  return rows[0]?.status ?? null;
}

/**
 * A call that needs a person's decision, a program's (`runId`, `index`, `code`) or a direct tool call of a
 * turn: stored as a pending decision shaped as in the seeds.
 */
export async function requestDecision(
  platform: Platform,
  call: {
    chatId: string;
    runId: string | null;
    index: number | null;
    toolCallId: string;
    callId: string;
    entry: ToolEntry;
    argsJson: string;
    capability: { action: "apps.call"; target: string };
    context?: AskContext;
    code: string;
  },
): Promise<string> {
  const id = `dec_${randomUUID()}`;
  const request: DecisionRequest = {
    capability: call.capability,
    toolCallId: call.toolCallId,
    app: {
      id: call.entry.connectionId,
      callId: call.callId,
      binding: call.entry.binding,
      tool: call.entry.name,
      arguments: JSON.parse(call.argsJson) as unknown,
    },
    code: { run: call.runId ?? "", index: call.index ?? -1, code: call.code },
    ...(call.context ? { context: call.context } : {}),
  };
  await platform.db.query(
    "insert into decisions (id, chat_id, run_id, call_index, status, request_enc, created_at) values ($1, $2, $3, $4, 'pending', $5, $6)",
    [
      id,
      call.chatId,
      call.runId,
      call.index,
      platform.seal(`decisions:${id}:request`, JSON.stringify(request)),
      Date.now(),
    ],
  );
  platform.events.emit("run", { runId: call.runId, chatId: call.chatId });
  return id;
}

/** After the decision on a direct call: send it (allow) or not (deny); subscribers post the result into the chat. */
async function finishDirectCall(ctx: ServiceContext, view: DecisionView): Promise<void> {
  const keyId = ctx.principal?.keyId ?? null;
  const settled = (summary: string, payload: unknown) =>
    ctx.platform.events.emit("direct-call-settled", { chatId: view.chatId, keyId, summary, payload });
  const binding = view.request.app.binding;
  if (view.status !== "allowed") {
    settled(`The call apps.${binding} was not allowed.`, { decision: view.status });
    return;
  }
  const entry = ctx.platform.apps.resolve(binding);
  if (!entry) {
    settled(`The call apps.${binding} could not be sent: the App is gone.`, {});
    return;
  }
  const principal = requirePermission(ctx.principal, "apps.use");
  const { outcome } = await performAppCall(ctx.platform, {
    chatId: view.chatId,
    runId: null,
    index: null,
    entry,
    argsJson: JSON.stringify(view.request.app.arguments ?? {}),
    principal,
  });
  const payload =
    outcome.type === "ok"
      ? (JSON.parse(outcome.resultJson) as unknown)
      : { error: { name: outcome.name, message: outcome.message } };
  settled(`The call apps.${binding} was allowed and sent.`, payload);
}
