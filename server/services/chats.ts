/**
 * Chats and who may read them: the owner, an admin, or a member the chat is shared with. Rights are
 * checked at every read, so unsharing takes effect at once.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { plainName } from "@/contracts/text";
import type { Db } from "../db/client";
import { isAdmin, type Principal, requireAuth, requirePermission } from "./auth";
import { AppError, invalidInput } from "./errors";

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

export const createChatInput = z.object({
  title: plainName("title", 200).optional(),
});

export async function createChat(db: Db, principal: Principal | null, input: unknown): Promise<Chat> {
  const p = requirePermission(principal, "sessions.write");
  const parsed = createChatInput.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const now = Date.now();
  const chat: Chat = {
    id: `chat_${randomUUID()}`,
    title: parsed.data.title ?? "New chat",
    ownerId: p.userId,
    pinned: false,
    createdAt: now,
    updatedAt: now,
  };
  await db.query("insert into chats (id, owner_id, title, created_at, updated_at) values ($1, $2, $3, $4, $5)", [
    chat.id,
    chat.ownerId,
    chat.title,
    now,
    now,
  ]);
  return chat;
}

const listInput = z
  .object({ query: z.string().max(200, "query must be at most 200 characters").optional() })
  .optional();

/** The chats the caller may read, pinned first then newest; `query` keeps those whose title contains it. */
export async function listChats(db: Db, principal: Principal | null, input?: unknown): Promise<Chat[]> {
  const p = requirePermission(principal, "sessions.read");
  const parsed = listInput.safeParse(input ?? undefined);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const query = parsed.data?.query?.trim() ?? "";
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

const updateInput = z
  .object({
    title: z
      .string({ error: "title must be a string" })
      .trim()
      .min(1, "title must not be empty")
      .max(200, "title must be at most 200 characters")
      .optional(),
    pinned: z.boolean({ error: "pinned must be true or false" }).optional(),
  })
  .strict()
  .refine((v) => v.title !== undefined || v.pinned !== undefined, "give title or pinned");

/** Renames or pins a chat (owner or admin, with sessions.write). */
export async function updateChat(db: Db, principal: Principal | null, chatId: string, input: unknown): Promise<Chat> {
  requirePermission(principal, "sessions.write");
  await ownedChat(db, principal, chatId);
  const parsed = updateInput.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const { title, pinned } = parsed.data;
  const now = Date.now();
  if (title !== undefined) await db.query("update chats set title = $1 where id = $2", [title, chatId]);
  if (pinned !== undefined)
    await db.query("update chats set pinned_at = $1 where id = $2", [pinned ? now : null, chatId]);
  return readableChat(db, principal, chatId);
}

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
  if (!isAdmin(p) && chat.ownerId !== p.userId)
    throw new AppError("FORBIDDEN", "Only the chat's owner or an admin can do this.");
  return chat;
}

export async function touchChat(db: Db, chatId: string): Promise<void> {
  await db.query("update chats set updated_at = $1 where id = $2", [Date.now(), chatId]);
}

const shareInput = z.object({ userId: z.string({ error: "userId is required" }).min(1, "userId is required") });

/** Shares a chat for reading with another person (owner or admin). */
export async function shareChat(
  db: Db,
  principal: Principal | null,
  chatId: string,
  input: unknown,
): Promise<{ chatId: string; userId: string }> {
  await ownedChat(db, requirePermission(principal, "sessions.write"), chatId);
  const parsed = shareInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const user = await db.query("select 1 from users where id = $1", [parsed.data.userId]);
  if (!user.length) throw new AppError("BAD_REQUEST", "userId: no such user");
  await db.query("insert into chat_shares (chat_id, user_id, created_at) values ($1, $2, $3) on conflict do nothing", [
    chatId,
    parsed.data.userId,
    Date.now(),
  ]);
  return { chatId, userId: parsed.data.userId };
}

export async function unshareChat(
  db: Db,
  principal: Principal | null,
  chatId: string,
  userId: string,
): Promise<{ ok: true }> {
  await ownedChat(db, requirePermission(principal, "sessions.write"), chatId);
  await db.query("delete from chat_shares where chat_id = $1 and user_id = $2", [chatId, userId]);
  return { ok: true };
}
