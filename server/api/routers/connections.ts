import "server-only";
import {
  addConnectionInput,
  codeApiInput,
  connectionIdInput,
  setPoliciesInput,
  updateConnectionInput,
} from "@/contracts/connections";
import {
  addConnection,
  codeApi,
  emailOutbox,
  listConnections,
  removeConnection,
  setPolicies,
  updateConnection,
} from "../../services/connections";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const connectionsRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listConnections(ctx)),
  create: publicProcedure.input(addConnectionInput).mutation(({ ctx, input }) => addConnection(ctx, input)),
  update: publicProcedure.input(updateConnectionInput).mutation(({ ctx, input }) => updateConnection(ctx, input)),
  remove: publicProcedure.input(connectionIdInput).mutation(({ ctx, input }) => removeConnection(ctx, input.id)),
  setPolicies: publicProcedure.input(setPoliciesInput).mutation(({ ctx, input }) => setPolicies(ctx, input)),
  emailOutbox: publicProcedure.query(({ ctx }) => emailOutbox(ctx)),
  codeApi: publicProcedure.input(codeApiInput.optional()).query(({ ctx, input }) => codeApi(ctx, input)),
});
