import "server-only";
import { createApiKeyInput, createUserInput } from "@/contracts/people";
import { addApiKey, addUser, listUsers } from "../../services/people";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const usersRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listUsers(ctx)),
  create: publicProcedure.input(createUserInput).mutation(({ ctx, input }) => addUser(ctx, input)),
});

export const apiKeysRouter = createTRPCRouter({
  create: publicProcedure.input(createApiKeyInput).mutation(({ ctx, input }) => addApiKey(ctx, input)),
});
