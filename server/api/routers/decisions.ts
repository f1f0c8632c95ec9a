import "server-only";
import { z } from "zod";
import { decide, listDecisions } from "../../services/decisions";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const decisionsRouter = createTRPCRouter({
  list: publicProcedure.input(z.unknown()).query(({ ctx, input }) => listDecisions(ctx, input)),
  decide: publicProcedure
    .input(z.object({ id: z.string(), decision: z.unknown(), remember: z.unknown().optional() }))
    .mutation(({ ctx, input }) => decide(ctx, input.id, { decision: input.decision, remember: input.remember })),
});
