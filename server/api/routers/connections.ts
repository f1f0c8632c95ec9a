import "server-only";
import { z } from "zod";
import {
  addConnection,
  codeApi,
  emailOutbox,
  listConnections,
  removeConnection,
  setPolicies,
  updateConnection,
} from "../../services/connections";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const connectionsRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listConnections(ctx.platform, ctx.principal)),
  create: publicProcedure
    .input(z.unknown())
    .mutation(({ ctx, input }) => addConnection(ctx.platform, ctx.principal, input)),
  update: publicProcedure
    .input(z.object({ id: z.string(), patch: z.unknown() }))
    .mutation(({ ctx, input }) => updateConnection(ctx.platform, ctx.principal, input.id, input.patch)),
  remove: publicProcedure
    .input(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => removeConnection(ctx.platform, ctx.principal, input.id)),
  setPolicies: publicProcedure
    .input(z.object({ id: z.string(), policies: z.unknown() }))
    .mutation(({ ctx, input }) => setPolicies(ctx.platform, ctx.principal, input.id, input.policies)),
  emailOutbox: publicProcedure.query(({ ctx }) => emailOutbox(ctx.platform, ctx.principal)),
  codeApi: publicProcedure.input(z.unknown()).query(({ ctx, input }) => codeApi(ctx.platform, ctx.principal, input)),
});
