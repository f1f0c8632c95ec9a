/**
 * Chats and who may read them: the owner, an admin, or a member the chat is shared with. Rights are
 * checked at every read, so unsharing takes effect at once.
 */
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
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  title: string;
  owner_id: string;
  created_at: string | number;
  updated_at: string | number;
}

const toChat = (r: Row): Chat => ({
  id: r.id,
  title: r.title,
  ownerId: r.owner_id,
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
  const chat: Chat = { id: `chat_${randomUUID()}`, title: parsed.data.title ?? "New chat", ownerId: p.userId, createdAt: now, updatedAt: now };
  await db.query("insert into chats (id, owner_id, title, created_at, updated_at) values ($1, $2, $3, $4, $5)", [
    chat.id,
    chat.ownerId,
    chat.title,
    now,
    now,
  ]);
  return chat;
}

export async function listChats(db: Db, principal: Principal | null): Promise<Chat[]> {
  const p = requirePermission(principal, "sessions.read");
  const rows =
    isAdmin(p)
      ? await db.query<Row>("select * from chats order by updated_at desc")
      : await db.query<Row>(
          `select c.* from chats c where c.owner_id = $1
           or exists (select 1 from chat_shares s where s.chat_id = c.id and s.user_id = $1)
           order by c.updated_at desc`,
          [p.userId],
        );
  return rows.map(toChat);
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
  if (!isAdmin(p) && chat.ownerId !== p.userId) throw new AppError("FORBIDDEN", "Only the chat's owner or an admin can do this.");
  return chat;
}

export async function touchChat(db: Db, chatId: string): Promise<void> {
  await db.query("update chats set updated_at = $1 where id = $2", [Date.now(), chatId]);
}

const shareInput = z.object({ userId: z.string({ error: "userId is required" }).min(1, "userId is required") });

/** Shares a chat for reading with another person (owner or admin). */
export async function shareChat(db: Db, principal: Principal | null, chatId: string, input: unknown): Promise<{ chatId: string; userId: string }> {
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

export async function unshareChat(db: Db, principal: Principal | null, chatId: string, userId: string): Promise<{ ok: true }> {
  await ownedChat(db, requirePermission(principal, "sessions.write"), chatId);
  await db.query("delete from chat_shares where chat_id = $1 and user_id = $2", [chatId, userId]);
  return { ok: true };
}
