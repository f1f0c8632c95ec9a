import { z } from "zod";
import { testModelConnection } from "../../services/agent/models";
import { getSettings, updateSettings } from "../../services/settings";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const settingsRouter = createTRPCRouter({
  get: publicProcedure.query(({ ctx }) => getSettings(ctx.platform.db, ctx.principal)),
  testModel: publicProcedure.mutation(({ ctx }) => testModelConnection(ctx.platform, ctx.principal)),
  update: publicProcedure.input(z.unknown()).mutation(({ ctx, input }) => updateSettings(ctx.platform.db, ctx.principal, input, ctx.platform.seal)),
});
