import { z } from "zod";
import { createChat, listChats, readableChat, shareChat, unshareChat } from "../../services/chats";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const chatsRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listChats(ctx.platform.db, ctx.principal)),
  byId: publicProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => readableChat(ctx.platform.db, ctx.principal, input.id)),
  create: publicProcedure.input(z.unknown()).mutation(({ ctx, input }) => createChat(ctx.platform.db, ctx.principal, input)),
  share: publicProcedure
    .input(z.object({ chatId: z.string(), userId: z.unknown() }))
    .mutation(({ ctx, input }) => shareChat(ctx.platform.db, ctx.principal, input.chatId, { userId: input.userId })),
  unshare: publicProcedure
    .input(z.object({ chatId: z.string(), userId: z.string() }))
    .mutation(({ ctx, input }) => unshareChat(ctx.platform.db, ctx.principal, input.chatId, input.userId)),
});
