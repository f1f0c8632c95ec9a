/**
 * Decisions: a call that needs a person's answer pauses its program; the chat's owner or an admin
 * answers once (a second answer is a conflict). This module owns the decisions table and nothing else:
 * a decided program call emits `decision-decided` and the run is run again from the top (boot.ts wires
 * it to the runner), where the journal reads the decision's status: an allowed call is sent, a denied
 * one throws AppCallDenied. A decided direct call is sent here (allow) or reported (deny).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type { DecideManyInput, DecisionItem, ListDecisionsInput } from "@/contracts/decisions";
import type { ToolEntry } from "../apps/registry";
import type { Db } from "../db/client";
import { observeDecisionWait } from "../metrics";
import type { Platform } from "../platform";
import { type AskContext, performAppCall, storedPolicy } from "./app-calls";
import { isAdmin, type Principal, principalFromKeyId, requirePermission } from "./auth";
import { ownedChat } from "./chats";
import type { ServiceContext } from "./context";
import { AppError, isAppError } from "./errors";
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
    /**
     * Arguments of the call its input schema does not name (when the schema lists its properties): the
     * App may ignore them, so a card must not present them as what the call does.
     */
    undeclared: string[];
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
  requested_by_key: string | null;
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
      undeclared: undeclaredArguments(entry.inputSchema, request.app.arguments),
    },
  };
}

/** The top-level argument names `schema` does not list among its properties ([] when it lists none). */
function undeclaredArguments(schema: Record<string, unknown>, args: unknown): string[] {
  const properties = schema.properties;
  if (!properties || typeof properties !== "object" || !args || typeof args !== "object" || Array.isArray(args))
    return [];
  return Object.keys(args).filter((key) => !Object.hasOwn(properties, key));
}

/** Decisions in chats the caller may decide in (owner, or any for an admin); `runId` gives one run's card. */
export async function listDecisions(ctx: ServiceContext, input: ListDecisionsInput = {}): Promise<DecisionView[]> {
  const p = requirePermission(ctx.principal, "apps.use");
  const where: string[] = [];
  const params: unknown[] = [];
  if (input.status) where.push(`d.status = $${params.push(input.status)}`);
  if (input.chatId) where.push(`d.chat_id = $${params.push(input.chatId)}`);
  if (input.runId) where.push(`d.run_id = $${params.push(input.runId)}`);
  if (!isAdmin(p)) where.push(`c.owner_id = $${params.push(p.userId)}`);
  const rows = await ctx.platform.db.query<Row>(
    `select d.* from decisions d join chats c on c.id = d.chat_id ${where.length ? `where ${where.join(" and ")}` : ""} order by d.created_at, d.call_index, d.id`,
    params,
  );
  return rows.map((r) => toView(ctx.platform, r));
}

/** Answers one decision (a second answer is a conflict). */
export async function decide(ctx: ServiceContext, item: DecisionItem): Promise<DecisionView> {
  const [view] = await applyDecisions(ctx, [item]);
  return view!;
}

/**
 * Answers several decisions at once (one card's Allow all, Deny all, or per call), all or none: a
 * decision the caller may not decide, one that does not exist, or one already taken refuses the whole
 * batch and nothing changes. Each run whose decisions are all taken is run again once.
 */
export async function decideMany(ctx: ServiceContext, input: DecideManyInput): Promise<DecisionView[]> {
  return applyDecisions(ctx, input.items);
}

async function applyDecisions(ctx: ServiceContext, items: DecisionItem[]): Promise<DecisionView[]> {
  const p: Principal = requirePermission(ctx.principal, "apps.use");
  const { db } = ctx.platform;
  const ids = items.map((i) => i.id);
  const rows = await db.query<Row>("select * from decisions where id = any($1::text[])", [ids]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing) throw new AppError("NOT_FOUND", `No such decision: ${missing}.`, { id: missing });
  for (const chatId of new Set(rows.map((r) => r.chat_id))) {
    await ownedChat(db, p, chatId).catch((error: unknown) => {
      if (isAppError(error) && error.code === "FORBIDDEN") throw error;
      // Worded as for an id that does not exist, so a stranger cannot tell the two apart.
      const id = rows.find((r) => r.chat_id === chatId)!.id;
      throw new AppError("NOT_FOUND", `No such decision: ${id}.`, { id });
    });
  }
  const taken = rows.find((r) => r.status !== "pending");
  const conflict = (row: Row) =>
    new AppError(
      "CONFLICT",
      items.length === 1
        ? `This decision was already taken (${row.status}).`
        : `Decision ${row.id} was already taken (${row.status}); nothing was changed.`,
      { id: row.id, status: row.status },
    );
  if (taken) throw conflict(taken);
  // A remember that cannot be granted refuses the whole batch before anything is decided.
  const remembers = items.map((i) => checkRemember(p, i.decision, byId.get(i.id)!.run_id, i.remember));
  const statuses = items.map((i) => (i.decision === "allow" ? "allowed" : "denied"));
  const now = Date.now();
  const updated = await db.transaction(async (tx) => {
    const done = await tx.query<Row>(
      `update decisions d set status = v.status, decided_by = $3, decided_at = $4
       from unnest($1::text[], $2::text[]) as v(id, status)
       where d.id = v.id and d.status = 'pending' returning d.*`,
      [ids, statuses, p.userId, now],
    );
    if (done.length !== ids.length) {
      // Someone else answered one of them in between: undo the whole batch.
      const late = (
        await tx.query<Row>("select * from decisions where id = any($1::text[]) and status <> 'pending'", [
          ids.filter((id) => !done.some((r) => r.id === id)),
        ])
      )[0];
      throw conflict(late ?? byId.get(ids[0]!)!);
    }
    return done;
  });
  const views = new Map(updated.map((r) => [r.id, toView(ctx.platform, r)]));
  for (const [i, item] of items.entries()) {
    const remember = remembers[i];
    const view = views.get(item.id)!;
    if (remember)
      await rememberDecision(
        ctx.platform,
        p,
        { id: item.id, chatId: view.chatId, runId: view.runId, app: view.request.app },
        remember,
      );
  }
  const runs = new Map<string, string>();
  for (const row of updated) {
    observeDecisionWait(row.status as "allowed" | "denied", (Number(row.decided_at) - Number(row.created_at)) / 1000);
    if (row.run_id) {
      if (!runs.has(row.run_id)) runs.set(row.run_id, row.id);
    } else ctx.platform.track(finishDirectCall(ctx, views.get(row.id)!, row.requested_by_key));
  }
  for (const [runId, decisionId] of runs) ctx.platform.events.emit("decision-decided", { decisionId, runId });
  for (const row of updated) ctx.platform.events.emit("run", { runId: row.run_id, chatId: row.chat_id });
  return ids.map((id) => views.get(id)!);
}

/**
 * Withdraws a run's pending decisions (the run ended while they waited: it returned, failed or was
 * cancelled); answers the call indexes they belonged to.
 */
export async function withdrawDecisions(db: Db, runId: string): Promise<number[]> {
  const rows = await db.query<{ call_index: number | null }>(
    "update decisions set status = 'withdrawn', decided_at = $2 where run_id = $1 and status = 'pending' returning call_index",
    [runId, Date.now()],
  );
  return rows.map((r) => r.call_index).filter((i): i is number => i !== null);
}

/** Who decided each decided decision of a run: the person and when (for the run's record). */
export async function runDecisions(
  db: Db,
  runId: string,
): Promise<Map<string, { by: { id: string; name: string }; at: number }>> {
  const rows = await db.query<{ id: string; decided_by: string; name: string | null; decided_at: string | number }>(
    `select d.id, d.decided_by, u.name, d.decided_at from decisions d left join users u on u.id = d.decided_by
     where d.run_id = $1 and d.status in ('allowed', 'denied') and d.decided_by is not null`,
    [runId],
  );
  return new Map(
    rows.map((r) => [r.id, { by: { id: r.decided_by, name: r.name ?? r.decided_by }, at: Number(r.decided_at) }]),
  );
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
    /** A direct call's: the key it is sent as once allowed (see finishDirectCall). */
    requestedByKey?: string | null;
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
    "insert into decisions (id, chat_id, run_id, call_index, status, request_enc, created_at, requested_by_key) values ($1, $2, $3, $4, 'pending', $5, $6, $7)",
    [
      id,
      call.chatId,
      call.runId,
      call.index,
      platform.seal(`decisions:${id}:request`, JSON.stringify(request)),
      Date.now(),
      call.requestedByKey ?? null,
    ],
  );
  platform.events.emit("run", { runId: call.runId, chatId: call.chatId });
  return id;
}

/**
 * After the decision on a direct call: send it (allow) or not (deny); subscribers post the result into the
 * chat. The call goes out as the key that asked for it (`requestedByKey`), whoever decided; a decision
 * written before that was stored goes out as the decider, as it did then.
 */
async function finishDirectCall(ctx: ServiceContext, view: DecisionView, requestedByKey: string | null): Promise<void> {
  const asker = requestedByKey ? await principalFromKeyId(ctx.platform.db, requestedByKey) : ctx.principal;
  const keyId = requestedByKey ?? ctx.principal?.keyId ?? null;
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
  // A person's allow does not outrank an admin's deny set while the call waited (the policy stored now).
  if ((await storedPolicy(ctx.platform, entry)) === "deny") {
    settled(`The call apps.${binding} was not sent: the platform's policy denies it now.`, { decision: "denied" });
    return;
  }
  if (!asker?.permissions.has("apps.use")) {
    settled(`The call apps.${binding} was not sent: the key that asked for it is revoked or may no longer use Apps.`, {
      decision: "allowed",
    });
    return;
  }
  const principal = asker;
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
