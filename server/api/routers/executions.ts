import "server-only";
import { z } from "zod";
import { cancelExecution, getExecution } from "../../services/executions";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const executionsRouter = createTRPCRouter({
  byId: publicProcedure
    .input(z.object({ executionId: z.string() }))
    .query(({ ctx, input }) => getExecution(ctx, input.executionId)),
  cancel: publicProcedure
    .input(z.object({ executionId: z.string() }))
    .mutation(({ ctx, input }) => cancelExecution(ctx, input.executionId)),
});
