import "server-only";
import { modelPatchSchema, settingsPatchSchema } from "@/contracts/settings";
import { testModelConnection } from "../../services/agent/models";
import { getSettings, updateSettings } from "../../services/settings";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const settingsRouter = createTRPCRouter({
  get: publicProcedure.query(({ ctx }) => getSettings(ctx)),
  /** Tests the model in the input (the unsaved form) or, without one, the saved model. */
  testModel: publicProcedure
    .input(modelPatchSchema.optional())
    .mutation(({ ctx, input }) => testModelConnection(ctx, input)),
  update: publicProcedure.input(settingsPatchSchema).mutation(({ ctx, input }) => updateSettings(ctx, input)),
});
