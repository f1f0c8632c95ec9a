import "server-only";
import { z } from "zod";
import { deleteChat } from "../../services/agent/turns";
import { requireAuth } from "../../services/auth";
import { createChat, listChats, readableChat, shareChat, unshareChat, updateChat } from "../../services/chats";
import { readSettings } from "../../services/settings";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const chatsRouter = createTRPCRouter({
  /** What chats can do now: a model configured (else manual mode), Code Mode on. */
  mode: publicProcedure.query(async ({ ctx }) => {
    requireAuth(ctx.principal);
    const s = await readSettings(ctx.platform.db);
    return { modelConfigured: s.model !== null || !!ctx.platform.modelOverride, codeModeEnabled: s.codeMode.enabled };
  }),
  list: publicProcedure
    .input(z.object({ query: z.string().optional() }).optional())
    .query(({ ctx, input }) => listChats(ctx.platform.db, ctx.principal, input)),
  byId: publicProcedure
    .input(z.object({ id: z.string() }))
    .query(({ ctx, input }) => readableChat(ctx.platform.db, ctx.principal, input.id)),
  create: publicProcedure
    .input(z.unknown())
    .mutation(({ ctx, input }) => createChat(ctx.platform.db, ctx.principal, input)),
  update: publicProcedure
    .input(z.object({ id: z.string(), title: z.unknown().optional(), pinned: z.unknown().optional() }))
    .mutation(({ ctx, input: { id, ...patch } }) => updateChat(ctx.platform.db, ctx.principal, id, patch)),
  remove: publicProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteChat(ctx, input.id)),
  share: publicProcedure
    .input(z.object({ chatId: z.string(), userId: z.unknown() }))
    .mutation(({ ctx, input }) => shareChat(ctx.platform.db, ctx.principal, input.chatId, { userId: input.userId })),
  unshare: publicProcedure
    .input(z.object({ chatId: z.string(), userId: z.string() }))
    .mutation(({ ctx, input }) => unshareChat(ctx.platform.db, ctx.principal, input.chatId, input.userId)),
});
