/**
 * Remembered grants: a person's "allow" that later matching calls reuse without asking. A grant covers
 * one tool of one connection (`match: "binding"`) or exactly one set of arguments (`"arguments"`), for
 * one run, one chat, or (made by an admin) everyone. Calls carrying a vault reference, and calls made after
 * a run read untrusted content, are only ever allowed by a run's grant. Every grant is audited (who made
 * it and when, how often it allowed a call, who revoked it and when) and can be revoked by the person
 * who made it or an admin; anyone else is told there is no such grant.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import {
  type GrantIdInput,
  type GrantView,
  type ListGrantsInput,
  type Remember,
  rememberSchema,
} from "@/contracts/grants";
import { canonicalJson, canonicalJsonOf } from "@/worker/canonical-json";
import type { ToolEntry } from "../apps/registry";
import { sha256 } from "../crypto";
import type { Platform } from "../platform";
import { isAdmin, type Principal, requirePermission } from "./auth";
import type { ServiceContext } from "./context";
import { AppError, invalidInput } from "./errors";

interface GrantRow {
  id: string;
  scope: GrantView["scope"];
  run_id: string | null;
  chat_id: string | null;
  connection_id: string;
  tool: string;
  binding: string;
  match: GrantView["match"];
  args_enc: string | null;
  decision_id: string | null;
  created_by: string;
  creator_name: string | null;
  chat_title: string | null;
  created_at: string | number;
  expires_at: string | number | null;
  revoked_by: string | null;
  revoker_name: string | null;
  revoked_at: string | number | null;
  uses: number;
}

const SELECT = `select g.*, cu.name as creator_name, ru.name as revoker_name, ch.title as chat_title from grants g
  left join users cu on cu.id = g.created_by left join users ru on ru.id = g.revoked_by
  left join chats ch on ch.id = g.chat_id`;

const argsDigest = (binding: string, argsJson: string) => sha256(`${binding}\n${canonicalJson(argsJson)}`);

function toView(platform: Platform, r: GrantRow, now = Date.now()): GrantView {
  const expiresAt = r.expires_at === null ? null : Number(r.expires_at);
  return {
    id: r.id,
    scope: r.scope,
    runId: r.run_id,
    chatId: r.chat_id,
    chatTitle: r.chat_title ?? null,
    connectionId: r.connection_id,
    tool: r.tool,
    binding: r.binding,
    match: r.match,
    arguments: r.args_enc ? (JSON.parse(platform.open(`grants:${r.id}:args`, r.args_enc)) as unknown) : null,
    decisionId: r.decision_id,
    createdBy: { id: r.created_by, name: r.creator_name ?? r.created_by },
    createdAt: Number(r.created_at),
    expiresAt,
    revokedBy: r.revoked_by ? { id: r.revoked_by, name: r.revoker_name ?? r.revoked_by } : null,
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    uses: Number(r.uses),
    active: r.revoked_at === null && (expiresAt === null || expiresAt > now),
  };
}

/**
 * The `remember` of a decision, checked before the decision is taken (so a refused grant leaves the
 * decision pending): only an allow is remembered, `scope: "run"` needs a program's call, and only an
 * admin grants to everyone.
 */
export function checkRemember(
  principal: Principal,
  decision: "allow" | "deny",
  runId: string | null,
  remember: unknown,
): Remember | undefined {
  if (remember === undefined || remember === null) return undefined;
  const parsed = rememberSchema.safeParse(remember);
  if (!parsed.success) throw invalidInput(parsed.error.issues.map((i) => ({ ...i, path: ["remember", ...i.path] })));
  if (decision !== "allow")
    throw new AppError("BAD_REQUEST", "remember: only an allow can be remembered.", {
      fields: [{ field: "remember", message: "only an allow can be remembered" }],
    });
  if (parsed.data.scope === "everyone" && !isAdmin(principal))
    throw new AppError("FORBIDDEN", 'Only an admin can remember a decision for everyone (remember.scope "everyone").');
  if (parsed.data.scope === "run" && runId === null)
    throw new AppError("BAD_REQUEST", 'remember.scope "run" needs a program\'s call; this is a direct call.', {
      fields: [{ field: "remember.scope", message: 'is "run", but this call is not part of a program' }],
    });
  return parsed.data;
}

/** Stores the grant a remembered allow makes. */
export async function rememberDecision(
  platform: Platform,
  principal: Principal,
  decision: {
    id: string;
    chatId: string;
    runId: string | null;
    app: { id: string; tool: string; binding: string; arguments?: unknown };
  },
  remember: Remember,
): Promise<GrantView> {
  const id = `grant_${randomUUID()}`;
  const now = Date.now();
  const argsJson = canonicalJsonOf(decision.app.arguments ?? {});
  const byArgs = remember.match === "arguments";
  await platform.db.query(
    `insert into grants (id, scope, run_id, chat_id, connection_id, tool, binding, match, args_digest, args_enc,
       decision_id, created_by, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      id,
      remember.scope,
      remember.scope === "run" ? decision.runId : null,
      remember.scope === "everyone" ? null : decision.chatId,
      decision.app.id,
      decision.app.tool,
      decision.app.binding,
      remember.match,
      byArgs ? argsDigest(decision.app.binding, argsJson) : null,
      byArgs ? platform.seal(`grants:${id}:args`, JSON.stringify(JSON.parse(argsJson))) : null,
      decision.id,
      principal.userId,
      now,
      remember.ttlMinutes === undefined ? null : now + remember.ttlMinutes * 60_000,
    ],
  );
  platform.events.emit("run", { runId: decision.runId, chatId: decision.chatId });
  const rows = await platform.db.query<GrantRow>(`${SELECT} where g.id = $1`, [id]);
  return toView(platform, rows[0]!);
}

/**
 * The active grant that allows this call of run `runId` in chat `chatId`, if any: the narrowest first.
 * `runOnly`: the call carries a vault reference or follows untrusted content, so only the run's grants count.
 */
export async function grantFor(
  platform: Platform,
  call: { runId: string | null; chatId: string; entry: ToolEntry; argsJson: string },
  runOnly: boolean,
): Promise<string | null> {
  const now = Date.now();
  const rows = await platform.db.query<{ id: string }>(
    `select id from grants
     where revoked_at is null and (expires_at is null or expires_at > $1)
       and connection_id = $2 and tool = $3 and binding = $4
       and (match = 'binding' or args_digest = $5)
       and ((scope = 'run' and run_id = $6) or (not $8 and ((scope = 'chat' and chat_id = $7) or scope = 'everyone')))
     order by case scope when 'run' then 0 when 'chat' then 1 else 2 end, created_at, id
     limit 1`,
    [
      now,
      call.entry.connectionId,
      call.entry.name,
      call.entry.binding,
      argsDigest(call.entry.binding, call.argsJson),
      call.runId,
      call.chatId,
      runOnly,
    ],
  );
  return rows[0]?.id ?? null;
}

/**
 * A grant allowed a call: the grant counts one more use, and a program's call (`call`: its run and index)
 * says which grant allowed it. A direct call has no call row.
 */
export async function recordGrantUse(
  platform: Platform,
  grantId: string,
  call: { runId: string; index: number } | null,
): Promise<void> {
  if (call)
    await platform.db.query("update code_run_calls set grant_id = $1 where run_id = $2 and idx = $3", [
      grantId,
      call.runId,
      call.index,
    ]);
  await platform.db.query("update grants set uses = uses + 1 where id = $1", [grantId]);
}

/**
 * Grants the caller may see: an admin all of them; anyone else the ones they made, the ones in their own
 * chats, and the grants to everyone (which apply to them). Active ones only unless `all`.
 */
export async function listGrants(ctx: ServiceContext, input: ListGrantsInput = {}): Promise<GrantView[]> {
  const p = requirePermission(ctx.principal, "apps.use");
  const where: string[] = [];
  const params: unknown[] = [];
  if (input.chatId) where.push(`g.chat_id = $${params.push(input.chatId)}`);
  if (input.runId) where.push(`g.run_id = $${params.push(input.runId)}`);
  if (!input.all)
    where.push(`g.revoked_at is null and (g.expires_at is null or g.expires_at > $${params.push(Date.now())})`);
  if (!isAdmin(p)) {
    const me = params.push(p.userId);
    where.push(
      `(g.created_by = $${me} or g.scope = 'everyone' or exists (select 1 from chats c where c.id = g.chat_id and c.owner_id = $${me}))`,
    );
  }
  const rows = await ctx.platform.db.query<GrantRow>(
    `${SELECT} ${where.length ? `where ${where.join(" and ")}` : ""} order by g.created_at desc, g.id`,
    params,
  );
  return rows.map((r) => toView(ctx.platform, r));
}

/** Revokes a grant: its creator or an admin; anyone else gets NOT_FOUND. Revoking twice changes nothing. */
export async function revokeGrant(ctx: ServiceContext, input: GrantIdInput): Promise<GrantView> {
  const p = requirePermission(ctx.principal, "apps.use");
  const { db } = ctx.platform;
  const row = (await db.query<GrantRow>(`${SELECT} where g.id = $1`, [input.id]))[0];
  if (!row || (!isAdmin(p) && row.created_by !== p.userId)) throw new AppError("NOT_FOUND", "No such grant.");
  await db.query("update grants set revoked_by = $1, revoked_at = $2 where id = $3 and revoked_at is null", [
    p.userId,
    Date.now(),
    row.id,
  ]);
  ctx.platform.events.emit("run", { runId: row.run_id, chatId: row.chat_id });
  const updated = (await db.query<GrantRow>(`${SELECT} where g.id = $1`, [row.id]))[0]!;
  return toView(ctx.platform, updated);
}
