import "server-only";
import { decideInput, listDecisionsInput } from "@/contracts/decisions";
import { decide, listDecisions } from "../../services/decisions";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const decisionsRouter = createTRPCRouter({
  list: publicProcedure.input(listDecisionsInput.optional()).query(({ ctx, input }) => listDecisions(ctx, input)),
  decide: publicProcedure.input(decideInput).mutation(({ ctx, input }) => decide(ctx, input)),
});
