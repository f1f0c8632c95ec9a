import "server-only";
import { z } from "zod";
import { addApiKey, addUser, listUsers } from "../../services/people";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const usersRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listUsers(ctx.platform.db, ctx.principal)),
  create: publicProcedure
    .input(z.unknown())
    .mutation(({ ctx, input }) => addUser(ctx.platform.db, ctx.principal, input)),
});

export const apiKeysRouter = createTRPCRouter({
  create: publicProcedure
    .input(z.unknown())
    .mutation(({ ctx, input }) => addApiKey(ctx.platform.db, ctx.principal, input)),
});
