import "server-only";
import { decideManyInput, decisionItem, listDecisionsInput } from "@/contracts/decisions";
import { decide, decideMany, listDecisions } from "../../services/decisions";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const decisionsRouter = createTRPCRouter({
  list: publicProcedure.input(listDecisionsInput).query(({ ctx, input }) => listDecisions(ctx, input)),
  decide: publicProcedure.input(decisionItem).mutation(({ ctx, input }) => decide(ctx, input)),
  decideMany: publicProcedure.input(decideManyInput).mutation(({ ctx, input }) => decideMany(ctx, input)),
});
