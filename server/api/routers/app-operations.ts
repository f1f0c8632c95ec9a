import "server-only";
import { answerInputInput, pendingInputsQuery } from "@/contracts/app-operations";
import { answerPendingInput, listPendingInputs } from "../../services/app-operations";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const appOperationsRouter = createTRPCRouter({
  pendingInputs: publicProcedure
    .input(pendingInputsQuery)
    .query(({ ctx, input }) => listPendingInputs(ctx, input.chatId)),
  answer: publicProcedure.input(answerInputInput).mutation(({ ctx, input }) => answerPendingInput(ctx, input)),
});
