import "server-only";
import { apiKeyIdInput, createApiKeyInput, createUserInput, updateUserInput, userIdInput } from "@/contracts/people";
import {
  addApiKey,
  addUser,
  listApiKeys,
  listUsers,
  removeUser,
  revokeApiKey,
  updateUser,
} from "../../services/people";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const usersRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listUsers(ctx)),
  create: publicProcedure.input(createUserInput).mutation(({ ctx, input }) => addUser(ctx, input)),
  update: publicProcedure.input(updateUserInput).mutation(({ ctx, input }) => updateUser(ctx, input)),
  remove: publicProcedure.input(userIdInput).mutation(({ ctx, input }) => removeUser(ctx, input)),
});

export const apiKeysRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listApiKeys(ctx)),
  revoke: publicProcedure.input(apiKeyIdInput).mutation(({ ctx, input }) => revokeApiKey(ctx, input)),
  create: publicProcedure.input(createApiKeyInput).mutation(({ ctx, input }) => addApiKey(ctx, input)),
});
