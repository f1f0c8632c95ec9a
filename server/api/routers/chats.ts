import { z } from "zod";
import { createChat, listChats, readableChat } from "../../services/chats";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const chatsRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listChats(ctx.platform.db, ctx.principal)),
  byId: publicProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => readableChat(ctx.platform.db, ctx.principal, input.id)),
  create: publicProcedure.input(z.unknown()).mutation(({ ctx, input }) => createChat(ctx.platform.db, ctx.principal, input)),
});
