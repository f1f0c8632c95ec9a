/** The tRPC API: one router a noun. */
import "server-only";
import { appOperationsRouter } from "./routers/app-operations";
import { authRouter } from "./routers/auth";
import { chatsRouter } from "./routers/chats";
import { codeRunsRouter } from "./routers/code-runs";
import { connectionsRouter } from "./routers/connections";
import { decisionsRouter } from "./routers/decisions";
import { executionsRouter } from "./routers/executions";
import { grantsRouter } from "./routers/grants";
import { apiKeysRouter, usersRouter } from "./routers/people";
import { settingsRouter } from "./routers/settings";
import { turnsRouter } from "./routers/turns";
import { vaultRouter } from "./routers/vault";
import { createCallerFactory, createTRPCRouter } from "./trpc";

export const appRouter = createTRPCRouter({
  auth: authRouter,
  settings: settingsRouter,
  chats: chatsRouter,
  codeRuns: codeRunsRouter,
  decisions: decisionsRouter,
  grants: grantsRouter,
  vault: vaultRouter,
  appOperations: appOperationsRouter,
  turns: turnsRouter,
  connections: connectionsRouter,
  executions: executionsRouter,
  users: usersRouter,
  apiKeys: apiKeysRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
