import "server-only";
import { z } from "zod";
import { answerPendingInput, listPendingInputs } from "../../services/app-operations";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const appOperationsRouter = createTRPCRouter({
  pendingInputs: publicProcedure
    .input(z.object({ chatId: z.string() }))
    .query(({ ctx, input }) => listPendingInputs(ctx, input.chatId)),
  answer: publicProcedure
    .input(z.object({ operationId: z.string(), answer: z.unknown() }))
    .mutation(({ ctx, input }) => answerPendingInput(ctx, input.operationId, input.answer)),
});
