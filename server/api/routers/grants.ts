import "server-only";
import { grantIdInput, listGrantsInput } from "@/contracts/grants";
import { listGrants, revokeGrant } from "../../services/grants";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const grantsRouter = createTRPCRouter({
  list: publicProcedure.input(listGrantsInput.optional()).query(({ ctx, input }) => listGrants(ctx, input)),
  revoke: publicProcedure.input(grantIdInput).mutation(({ ctx, input }) => revokeGrant(ctx, input)),
});
