/**
 * What a client sends to manage chats (tRPC `chats.*` and `/v1/chats/**`): one schema per request, parsed
 * by the tRPC procedure's `.input` and by the REST route alike. REST merges the path's id into the body.
 */
import { z } from "zod";
import { idField, onlyFields, plainName } from "./text";

/** Longest chat title. */
export const CHAT_TITLE_MAX = 200;

export const createChatInput = onlyFields(
  { title: plainName("title", CHAT_TITLE_MAX).optional() },
  "a new chat takes title only",
);
export type CreateChatInput = z.infer<typeof createChatInput>;

/** `query` keeps the chats whose title contains it. */
export const listChatsInput = z
  .object({ query: z.string({ error: "query must be a string" }).max(200, "query must be at most 200 characters") })
  .partial();
export type ListChatsInput = z.infer<typeof listChatsInput>;

export const chatIdInput = z.object({ id: idField("id") });

/** Rename or pin: `{id, title?, pinned?}` (REST: the path's chat id, the body's fields). */
export const updateChatInput = z
  .object({
    id: idField("id"),
    title: plainName("title", CHAT_TITLE_MAX).optional(),
    pinned: z.boolean({ error: "pinned must be true or false" }).optional(),
  })
  .strict()
  .refine((v) => v.title !== undefined || v.pinned !== undefined, "give title or pinned");
export type UpdateChatInput = z.infer<typeof updateChatInput>;

/** Share for reading with one person, or take it back. */
export const shareChatInput = z.object({ chatId: idField("chatId"), userId: idField("userId") });
export type ShareChatInput = z.infer<typeof shareChatInput>;

/** One message to the model in a chat (`turns.send`, `POST /v1/chats/:chatId/turns`). */
export const sendTurnInput = onlyFields(
  {
    chatId: idField("chatId"),
    message: z
      .string({ error: "message is required" })
      .trim()
      .min(1, "message must not be empty")
      .max(100_000, "message must be at most 100000 characters"),
  },
  "a turn takes message only",
);
export type SendTurnInput = z.infer<typeof sendTurnInput>;
