import "server-only";
import { z } from "zod";
import { listGrants, revokeGrant } from "../../services/grants";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const grantsRouter = createTRPCRouter({
  list: publicProcedure.input(z.unknown()).query(({ ctx, input }) => listGrants(ctx, input)),
  revoke: publicProcedure.input(z.unknown()).mutation(({ ctx, input }) => revokeGrant(ctx, input)),
});
