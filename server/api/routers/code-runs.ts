import "server-only";
import { z } from "zod";
import { appCallInput, finishRunInput, hostAliveInput, idField, startRunInput } from "@/contracts/code-run";
import { reconcileCallInput } from "@/contracts/reconcile";
import { handleCall } from "../../services/code-runs/calls";
import { finishRun } from "../../services/code-runs/endings";
import { reconcileCall } from "../../services/code-runs/reconcile";
import { getRun, listRuns } from "../../services/code-runs/records";
import { cancelRun, claimForPage, renewPageHost, runOnServer, startRun } from "../../services/code-runs/runs";
import { runChanges, runLogs } from "../../services/run-feed";
import { createTRPCRouter, publicProcedure } from "../trpc";

const chatRef = z.object({ chatId: idField("chatId") });

export const codeRunsRouter = createTRPCRouter({
  /** A person's answer to a call whose outcome is Unknown: Mark as done or Send again. */
  reconcile: publicProcedure
    .input(reconcileCallInput)
    .mutation(({ ctx, input: { runId, index, ...answer } }) => reconcileCall(ctx, runId, index, answer)),
  /** Starts a run for the page's worker: the record plus the ticket the worker runs. */
  start: publicProcedure.input(startRunInput).mutation(({ ctx, input }) => startRun(ctx, input, "browser")),
  /** One nested call from a running program. */
  appCall: publicProcedure.input(appCallInput).mutation(({ ctx, input }) =>
    handleCall(ctx, input.runId, input.attempt, {
      index: input.index,
      binding: input.binding,
      argsJson: input.argsJson,
    }),
  ),
  /** The page hosting an attempt is still there (its lease, sweep.ts). */
  hostAlive: publicProcedure
    .input(hostAliveInput)
    .mutation(({ ctx, input }) => renewPageHost(ctx, input.runId, input.attempt)),
  finish: publicProcedure
    .input(finishRunInput)
    .mutation(({ ctx, input }) => finishRun(ctx, input.runId, input.attempt, input.outcome)),
  /** A page takes a turn's program to run in its worker; null when another host has it. */
  claim: publicProcedure
    .input(z.object({ runId: idField("runId"), attempt: z.number().int().min(1) }))
    .mutation(({ ctx, input }) => claimForPage(ctx, input.runId, input.attempt)),
  /** Runs a program on the server runner (no browser). */
  runOnServer: publicProcedure.input(startRunInput).mutation(({ ctx, input }) => runOnServer(ctx, input)),
  cancel: publicProcedure.input(z.object({ id: idField("id") })).mutation(({ ctx, input }) => cancelRun(ctx, input.id)),
  byId: publicProcedure.input(z.object({ id: idField("id") })).query(({ ctx, input }) => getRun(ctx, input.id)),
  listByChat: publicProcedure.input(chatRef).query(({ ctx, input }) => listRuns(ctx, input.chatId)),
  /** Live: a notice each time a run of the chat changes (status, a call, its result); read the record then. */
  onChange: publicProcedure
    .input(chatRef)
    .subscription(({ ctx, input, signal }) => runChanges(ctx, input.chatId, signal)),
  /** Live log lines of the chat's runs on the server runner, as they happen. */
  onLog: publicProcedure.input(chatRef).subscription(({ ctx, input, signal }) => runLogs(ctx, input.chatId, signal)),
});
