/**
 * Chats and who may read them: the owner, an admin, or a member the chat is shared with. Rights are
 * checked at every read, so unsharing takes effect at once.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type { CreateChatInput, ListChatsInput, ShareChatInput, UpdateChatInput } from "@/contracts/chats";
import type { Db } from "../db/client";
import { isAdmin, type Principal, personWhoBelongs, requireAuth, requirePermission } from "./auth";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";
import { readSettings } from "./settings";

export interface Chat {
  id: string;
  title: string;
  ownerId: string;
  /** Pinned chats come first in the list. */
  pinned: boolean;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  title: string;
  owner_id: string;
  pinned_at?: string | number | null;
  created_at: string | number;
  updated_at: string | number;
}

const toChat = (r: Row): Chat => ({
  id: r.id,
  title: r.title,
  ownerId: r.owner_id,
  pinned: r.pinned_at != null,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export async function createChat(ctx: ServiceContext, input: CreateChatInput): Promise<Chat> {
  const p = requirePermission(ctx.principal, "sessions.write");
  const now = Date.now();
  const chat: Chat = {
    id: `chat_${randomUUID()}`,
    title: input.title ?? "New chat",
    ownerId: p.userId,
    pinned: false,
    createdAt: now,
    updatedAt: now,
  };
  await ctx.platform.db.query(
    "insert into chats (id, owner_id, title, created_at, updated_at) values ($1, $2, $3, $4, $5)",
    [chat.id, chat.ownerId, chat.title, now, now],
  );
  return chat;
}

/** The chats the caller may read, pinned first then newest; `query` keeps those whose title contains it. */
export async function listChats(ctx: ServiceContext, input: ListChatsInput = {}): Promise<Chat[]> {
  const p = requirePermission(ctx.principal, "sessions.read");
  const { db } = ctx.platform;
  const query = input.query?.trim() ?? "";
  const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const order = "order by c.pinned_at desc nulls last, c.updated_at desc";
  const rows = isAdmin(p)
    ? await db.query<Row>(`select c.* from chats c where c.title ilike $1 ${order}`, [pattern])
    : await db.query<Row>(
        `select c.* from chats c where (c.owner_id = $1
           or exists (select 1 from chat_shares s where s.chat_id = c.id and s.user_id = $1))
           and c.title ilike $2 ${order}`,
        [p.userId, pattern],
      );
  return rows.map(toChat);
}

/** Renames or pins a chat (owner or admin, with sessions.write). */
export async function updateChat(ctx: ServiceContext, input: UpdateChatInput): Promise<Chat> {
  const { db } = ctx.platform;
  const { id: chatId, title, pinned } = input;
  requirePermission(ctx.principal, "sessions.write");
  await ownedChat(db, ctx.principal, chatId);
  const now = Date.now();
  if (title !== undefined) await db.query("update chats set title = $1 where id = $2", [title, chatId]);
  if (pinned !== undefined)
    await db.query("update chats set pinned_at = $1 where id = $2", [pinned ? now : null, chatId]);
  return readableChat(db, ctx.principal, chatId);
}

/** What chats can do now: a model configured (else manual mode), Code Mode on. */
export async function chatMode(ctx: ServiceContext): Promise<{ modelConfigured: boolean; codeModeEnabled: boolean }> {
  requireAuth(ctx.principal);
  const s = await readSettings(ctx.platform.db);
  return { modelConfigured: s.model !== null || !!ctx.platform.modelOverride, codeModeEnabled: s.codeMode.enabled };
}

/** The chat by id for a caller who may read it (the adapters' read). */
export const getChat = (ctx: ServiceContext, chatId: string): Promise<Chat> =>
  readableChat(ctx.platform.db, ctx.principal, chatId);

/** Sets a title the server chose, only while the chat still has `expected` (a person's rename wins). */
export async function autoTitle(db: Db, chatId: string, expected: string, title: string): Promise<boolean> {
  const rows = await db.query("update chats set title = $1 where id = $2 and title = $3 returning id", [
    title,
    chatId,
    expected,
  ]);
  return rows.length > 0;
}

/**
 * Deletes a chat and everything in it (owner or admin, with sessions.write): its turns and messages,
 * code runs with their calls, decisions and App operations, all stored encrypted. Running work is
 * stopped first by `deleteChat` in agent/turns.
 */
export async function deleteChatRows(db: Db, chatId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      "delete from app_operations where chat_id = $1 or run_id in (select id from code_runs where chat_id = $1)",
      [chatId],
    );
    await tx.query("delete from decisions where chat_id = $1", [chatId]);
    await tx.query("delete from idempotency_keys where run_id in (select id from code_runs where chat_id = $1)", [
      chatId,
    ]);
    await tx.query("delete from grants where chat_id = $1", [chatId]);
    await tx.query("delete from code_runs where chat_id = $1", [chatId]);
    await tx.query("delete from chats where id = $1", [chatId]);
  });
}

/** The chat if the caller may read it now; otherwise NOT_FOUND (a stranger learns nothing). */
export async function readableChat(db: Db, principal: Principal | null, chatId: string): Promise<Chat> {
  const p = requireAuth(principal);
  const rows = await db.query<Row>("select * from chats where id = $1", [chatId]);
  const row = rows[0];
  if (row && (isAdmin(p) || row.owner_id === p.userId)) return toChat(row);
  if (row) {
    const shared = await db.query("select 1 from chat_shares where chat_id = $1 and user_id = $2", [chatId, p.userId]);
    if (shared.length) return toChat(row);
  }
  throw new AppError("NOT_FOUND", "No such chat.");
}

/** Owner or admin: the people who may run programs and decide in the chat. */
export async function ownedChat(db: Db, principal: Principal | null, chatId: string): Promise<Chat> {
  const chat = await readableChat(db, principal, chatId);
  const p = requireAuth(principal);
  if (!ownsChat(p, chat.ownerId)) throw new AppError("FORBIDDEN", "Only the chat's owner or an admin can do this.");
  return chat;
}

/** `ownedChat`'s rule for a chat whose owner is `ownerId` (null: no such chat). */
export const ownsChat = (p: Principal, ownerId: string | null): boolean =>
  ownerId !== null && (isAdmin(p) || ownerId === p.userId);

export async function touchChat(db: Db, chatId: string): Promise<void> {
  await db.query("update chats set updated_at = $1 where id = $2", [Date.now(), chatId]);
}

/** Shares a chat for reading with another person (owner or admin). */
export async function shareChat(ctx: ServiceContext, input: ShareChatInput): Promise<ShareChatInput> {
  const { db } = ctx.platform;
  const { chatId, userId } = input;
  await ownedChat(db, requirePermission(ctx.principal, "sessions.write"), chatId);
  await personWhoBelongs(db, userId);
  await db.query("insert into chat_shares (chat_id, user_id, created_at) values ($1, $2, $3) on conflict do nothing", [
    chatId,
    userId,
    Date.now(),
  ]);
  return { chatId, userId };
}

export async function unshareChat(ctx: ServiceContext, input: ShareChatInput): Promise<{ ok: true }> {
  const { db } = ctx.platform;
  const { chatId, userId } = input;
  await ownedChat(db, requirePermission(ctx.principal, "sessions.write"), chatId);
  await db.query("delete from chat_shares where chat_id = $1 and user_id = $2", [chatId, userId]);
  return { ok: true };
}
