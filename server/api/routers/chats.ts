import "server-only";
import { chatIdInput, createChatInput, listChatsInput, shareChatInput, updateChatInput } from "@/contracts/chats";
import { deleteChat } from "../../services/agent/turns";
import { chatMode, createChat, getChat, listChats, shareChat, unshareChat, updateChat } from "../../services/chats";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const chatsRouter = createTRPCRouter({
  /** What chats can do now: a model configured (else manual mode), Code Mode on. */
  mode: publicProcedure.query(({ ctx }) => chatMode(ctx)),
  list: publicProcedure.input(listChatsInput.optional()).query(({ ctx, input }) => listChats(ctx, input)),
  byId: publicProcedure.input(chatIdInput).query(({ ctx, input }) => getChat(ctx, input.id)),
  create: publicProcedure.input(createChatInput.optional()).mutation(({ ctx, input }) => createChat(ctx, input ?? {})),
  update: publicProcedure.input(updateChatInput).mutation(({ ctx, input }) => updateChat(ctx, input)),
  remove: publicProcedure.input(chatIdInput).mutation(({ ctx, input }) => deleteChat(ctx, input.id)),
  share: publicProcedure.input(shareChatInput).mutation(({ ctx, input }) => shareChat(ctx, input)),
  unshare: publicProcedure.input(shareChatInput).mutation(({ ctx, input }) => unshareChat(ctx, input)),
});
