import "server-only";
import { z } from "zod";
import { testModelConnection } from "../../services/agent/models";
import { getSettings, updateSettings } from "../../services/settings";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const settingsRouter = createTRPCRouter({
  get: publicProcedure.query(({ ctx }) => getSettings(ctx.platform.db, ctx.principal)),
  /** Tests the model in the input (the unsaved form) or, without one, the saved model. */
  testModel: publicProcedure
    .input(z.record(z.string(), z.unknown()).optional())
    .mutation(({ ctx, input }) => testModelConnection(ctx.platform, ctx.principal, input)),
  update: publicProcedure
    .input(z.unknown())
    .mutation(({ ctx, input }) => updateSettings(ctx.platform.db, ctx.principal, input, ctx.platform.seal)),
});
